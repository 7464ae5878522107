package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Run runs argv in the sandbox to its end, its timeout or ctx's end, and
// reports its output (capped) and exit code. A command that fails or times
// out is a Result, not an error; the error is for a spec that cannot run
// and for ctx ending first (the command is killed then too). Whatever the
// command left running in its process group is killed when it exits.
func Run(ctx context.Context, s Spec, argv []string, l Limits) (Result, error) {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.OutputCap <= 0 {
		l.OutputCap = DefaultOutputCap
	}
	runCtx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	cmd, err := Command(runCtx, s, argv)
	if err != nil {
		return Result{}, err
	}
	// One pipe of our own for stdout and stderr: exec's copying goroutines
	// would make Wait wait for every background process holding the pipe.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("cannot run the command: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, pw, pw
	out := newCapped(l.OutputCap)
	var copied sync.WaitGroup
	copied.Add(1)
	go func() {
		defer copied.Done()
		_, _ = io.Copy(out, pr)
	}()
	start := time.Now()
	err = cmd.Start()
	if err == nil {
		pw.Close()
		if err = Started(cmd); err != nil {
			Kill(cmd)
			_ = cmd.Wait()
		}
	} else {
		_ = Started(cmd)
		pw.Close()
	}
	if err != nil {
		pr.Close()
		copied.Wait()
		return Result{}, fmt.Errorf("cannot start %s: %w", argv[0], err)
	}
	waitErr := cmd.Wait()
	// Leftovers of the group, when unsupervised; a supervisor killed them
	// all before it exited, and under bwrap the namespace is gone already.
	Kill(cmd)
	res := Result{Duration: time.Since(start), ExitCode: cmd.ProcessState.ExitCode()}
	drained := make(chan struct{})
	go func() { copied.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(killGrace):
		// An unsandboxed process that left the group still holds the pipe.
		pr.Close()
		<-drained
	}
	pr.Close()
	res.Output, res.Truncated = out.String()
	if ctx.Err() != nil {
		return res, fmt.Errorf("the command was stopped: %w", context.Cause(ctx))
	}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		res.TimedOut = true
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !res.TimedOut {
		return res, fmt.Errorf("the command could not be waited for: %w", waitErr)
	}
	return res, nil
}
