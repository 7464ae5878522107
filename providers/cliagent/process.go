package cliagent

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/supervisor"
)

// process is one CLI run in its own process group. When its leader exits,
// or when it is killed, the whole group is killed before the leader is
// reaped (so the group's id cannot have been reused), and no child the CLI
// started outlives the run. An unsandboxed run's leader is its supervisor
// (package supervisor), which does the same for the CLI's whole tree, the
// commands that left its group included.
type process struct {
	cmd        *exec.Cmd
	pgid       int
	supervised bool
	stdout     *os.File
	exited     chan struct{} // closed once the leader is reaped
	err        error         // the leader's exit, valid after exited

	mu       sync.Mutex
	reaping  bool        // the leader is being reaped: its ids may be reused
	backstop *time.Timer // kills a supervisor that did not stop when asked
}

// startProcess starts cmd in a new process group with stdout on a pipe the
// caller reads; stderr goes to the given writer. An unconfined run is put
// under a supervisor; a confined one comes under one already (the
// sandbox's command, package sandbox, supervises bwrap).
func startProcess(cmd *exec.Cmd, stderr *tailBuffer, confined bool) (*process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	if !supervisor.Supervised(cmd) {
		dieWithParent(cmd.SysProcAttr)
	}
	if !confined {
		if err := supervisor.Command(cmd); err != nil {
			return nil, err
		}
	}
	supervised := supervisor.Supervised(cmd)
	// A child still holding stderr after the group is killed (it left the
	// group) must not hold Wait.
	cmd.WaitDelay = 2 * time.Second
	r, w, err := os.Pipe()
	if err != nil {
		_ = supervisor.Started(cmd) // closes its pipe: nothing was started
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, stderr
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		_ = supervisor.Started(cmd)
		return nil, err
	}
	w.Close()
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, supervised: supervised, stdout: r, exited: make(chan struct{})}
	if err := supervisor.Started(cmd); err != nil {
		p.killGroup()
		_ = cmd.Wait()
		r.Close()
		return nil, err
	}
	go p.wait()
	return p, nil
}

// kill ends the run now: a plain run's group is killed; a supervisor is
// asked to kill its CLI's tree and exit as the CLI did, and its group is
// killed should it not have within supervisor.Grace.
func (p *process) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.reaping:
	case !p.supervised:
		p.killGroup()
	case p.backstop == nil:
		_ = syscall.Kill(p.pgid, syscall.SIGTERM)
		p.backstop = time.AfterFunc(supervisor.Grace, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if !p.reaping {
				p.killGroup()
			}
		})
	}
}

// endGroup kills what is left of the leader's group once the leader has
// exited, marks the process reaping and stops the backstop: the end of
// wait on every system, whichever of leader and group goes first.
func (p *process) endGroup() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killGroup()
	p.reaping = true
	if p.backstop != nil {
		p.backstop.Stop()
	}
}

func (p *process) killGroup() {
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
}

// exitCode is the leader's exit status (-1 when killed by a signal), after
// exited.
func (p *process) exitCode() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// tailBuffer keeps the last bytes written to it: a CLI's stderr, whose end
// holds its error message.
type tailBuffer struct {
	mu    sync.Mutex
	buf   []byte
	limit int
}

func newTail(limit int) *tailBuffer { return &tailBuffer{limit: limit} }

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
