package cliagent

import (
	"errors"

	"golang.org/x/sys/unix"
)

func (p *process) wait() {
	// Wait for the leader's exit without reaping it, kill what is left of
	// its group, then reap.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, p.pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	p.endGroup()
	p.err = p.cmd.Wait()
	close(p.exited)
}
