package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// killGrace is how long Wait waits for the pipes of a killed command.
const killGrace = 2 * time.Second

// Command builds the sandboxed command for argv (argv[0] is looked up on
// the sandbox's PATH). It runs in its own process group; cancelling ctx
// kills the whole group (Kill). The caller sets Stdin, Stdout and Stderr
// and starts it. With s.Unsandboxed it is argv run plainly in s.Workspace
// with the same environment.
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
	cmd.Cancel = func() error { Kill(cmd); return nil }
	cmd.WaitDelay = killGrace
	return cmd, nil
}

// Kill kills cmd's whole process group. Under bwrap that is bwrap itself,
// whose death (--die-with-parent) takes the sandbox's PID namespace and so
// every process started inside, setsid'd ones included.
func Kill(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
