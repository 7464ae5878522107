package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/supervisor"
)

// killGrace is how long Wait waits for the pipes of a killed command.
const killGrace = 2 * time.Second

// Command builds the sandboxed command for argv (argv[0] is looked up on
// the sandbox's PATH). It runs under a supervisor (internal/supervisor),
// the server's own binary, which kills every process the command started,
// setsid'd and daemonized ones included, when the command exits, when it
// is killed (Kill) and when the server dies, even by SIGKILL. Cancelling
// ctx kills it. The caller sets Stdin, Stdout and Stderr, starts it, and
// then calls Started, whether the start succeeded or not. With
// s.Unsandboxed it is argv run plainly in s.Workspace with the same
// environment.
func Command(ctx context.Context, s Spec, argv []string) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	if s.Unsandboxed {
		if len(argv) == 0 || argv[0] == "" {
			return nil, fmt.Errorf("%w: no command to run", ErrBadSpec)
		}
		env, err := s.environment(nil)
		if err != nil {
			return nil, err
		}
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env, cmd.Dir = env, s.Workspace
	} else {
		bwrap, err := bwrapPath()
		if err != nil {
			return nil, err
		}
		args, err := bwrapArgs(s, argv, nil)
		if err != nil {
			return nil, err
		}
		cmd = exec.CommandContext(ctx, bwrap, args...)
		cmd.Env = []string{} // bwrap itself needs none; --clearenv empties the sandbox's
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Under the supervisor even bwrap: bwrap sets its parent-death signal
	// only after its clone, so a server killed in between left the sandbox
	// running; the supervisor's is set before its exec, and the sandbox,
	// orphaned, is the supervisor's to kill.
	if err := supervisor.Command(cmd); err != nil {
		return nil, err
	}
	cmd.Cancel = func() error { Kill(cmd); return nil }
	cmd.WaitDelay = killGrace
	if supervisor.Supervised(cmd) {
		// Wait kills the supervisor itself only past its own grace.
		cmd.WaitDelay = supervisor.Grace
	}
	return cmd, nil
}

// Started reads the start report of cmd, a command of Command, after its
// Start: nil once the command runs, else the error starting it gave.
// After a failed Start it only releases what Command held.
func Started(cmd *exec.Cmd) error { return supervisor.Started(cmd) }

// Kill ends cmd and every process it started. Supervised (Linux), the
// supervisor is asked to kill the command's whole tree and to exit as the
// command did, and is killed itself should it not within supervisor.Grace.
// Otherwise the command's process group is killed; under bwrap that is
// bwrap itself, whose death (--die-with-parent) takes the sandbox's PID
// namespace and so every process started inside, setsid'd ones included.
func Kill(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	if supervisor.Supervised(cmd) {
		supervisor.Stop(cmd)
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
