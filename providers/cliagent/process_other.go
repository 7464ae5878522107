//go:build !linux

package cliagent

func (p *process) wait() {
	// There is no waitid WNOWAIT here: the leader is reaped first, then
	// what is left of its group is killed. The group's id cannot be reused
	// while any process of it lives, so only a group already empty could
	// have been given, in that instant, to a new process's group.
	p.err = p.cmd.Wait()
	p.endGroup()
	close(p.exited)
}
