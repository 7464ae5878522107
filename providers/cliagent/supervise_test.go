//go:build linux

package cliagent

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/await"
	"github.com/massgen-go/massgen-mcp/internal/supervisor"
)

// startScript starts sh -c script ($1 a pid file in a fresh directory, also
// the working directory) as an unsandboxed CLI run, and returns the run and
// the pid file.
func startScript(t *testing.T, script string) (*process, string) {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command("sh", "-c", script, "sh", pidFile)
	cmd.Dir = dir
	p, err := startProcess(cmd, newTail(1024), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill(); <-p.exited })
	return p, pidFile
}

// pidIn waits for the pid a script writes; the script's run ending first
// fails the test at once.
func pidIn(t *testing.T, p *process, pidFile string) int {
	t.Helper()
	var pid int
	await.Until(t, "the CLI run writing its command's pid", await.Slow, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(data), "\n") {
			return false
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return true
	}, p.exited)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // a failed test leaves nothing
	return pid
}

// TestKillingACLIRunKillsTheCommandsThatLeftItsGroup: a step's timeout,
// cancel or limit kills the CLI's process group, which a command in a
// session of its own, or a daemon, is not in; the supervisor, their
// subreaper, kills them too (before it they ran on after the step).
func TestKillingACLIRunKillsTheCommandsThatLeftItsGroup(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"in a session of its own", ownSession + ` & wait`},
		{"daemonized", `(` + ownSession + ` &); exec sleep 120`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, pidFile := startScript(t, c.script)
			command := pidIn(t, p, pidFile)
			p.kill()
			select {
			case <-p.exited:
			case <-time.After(5 * time.Second):
				t.Fatal("the killed CLI run did not end")
			}
			if code := p.exitCode(); code != -1 {
				t.Errorf("a killed run's exit code is %d, want -1 (killed by a signal)", code)
			}
			dies(t, command, "the killed CLI run's command")
		})
	}
}

// TestACLIRunsDaemonDiesWhenTheCLIExits: what a CLI leaves behind when it
// exits is killed with its group, a daemon that left the group included
// ("no child outlives the step").
func TestACLIRunsDaemonDiesWhenTheCLIExits(t *testing.T) {
	p, pidFile := startScript(t, `(`+ownSession+` &); until [ -s "$1" ]; do sleep 0.01; done`)
	command := pidIn(t, p, pidFile)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the CLI run did not end")
	}
	if code := p.exitCode(); code != 0 {
		t.Errorf("exit code %d, want the CLI's 0", code)
	}
	dies(t, command, "the daemon of a CLI run that exited")
}

// TestTheSupervisorPassesTheRunThroughUnchanged: the CLI under its
// supervisor reads the same stdin, writes the same stdout and stderr, runs in
// the same directory with the same environment, and ends with the same
// status as when it ran plainly; one that cannot start fails to start the
// same way.
func TestTheSupervisorPassesTheRunThroughUnchanged(t *testing.T) {
	dir := t.TempDir()
	type run struct {
		stdout, stderr string
		code           int
		signal         syscall.Signal
		startErr       string
	}
	runOnce := func(t *testing.T, name string, args []string, supervised bool) run {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin", "PROBE=value with spaces"}
		cmd.Stdin = strings.NewReader("the prompt\n")
		stderr := newTail(1024)
		p, err := startProcess(cmd, stderr, !supervised)
		if err != nil {
			return run{startErr: err.Error()}
		}
		if supervised != (p.cmd.Args[0] == supervisor.Name) {
			t.Fatalf("supervised %v, but ran %q", supervised, p.cmd.Args)
		}
		var out bytes.Buffer
		out.ReadFrom(p.stdout)
		<-p.exited
		r := run{stdout: out.String(), stderr: stderr.String(), code: p.exitCode(), signal: -1}
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
		return r
	}
	for _, c := range []struct {
		name string
		argv []string
		want run // as the plain run ends (its streams aside)
	}{
		{"streams, directory and environment", []string{"sh", "-c", `cat; pwd; echo "$PROBE"; echo "$0 $1"; echo oops >&2; exit 7`, "zero", "one"},
			run{code: 7, signal: -1}},
		{"success", []string{"true"}, run{signal: -1}},
		{"killed by a signal", []string{"sh", "-c", `kill -TERM $$`}, run{code: -1, signal: syscall.SIGTERM}},
		{"killed by a signal the Go runtime handles", []string{"sh", "-c", `kill -SEGV $$`}, run{code: -1, signal: syscall.SIGSEGV}},
		{"a binary that is not there", []string{filepath.Join(dir, "missing")},
			run{startErr: "fork/exec " + filepath.Join(dir, "missing") + ": no such file or directory"}},
		{"a binary that cannot run", []string{dir}, run{startErr: "fork/exec " + dir + ": permission denied"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			plain := runOnce(t, c.argv[0], c.argv[1:], false)
			if c.name == "streams, directory and environment" {
				c.want.stdout = "the prompt\n" + dir + "\nvalue with spaces\nzero one\n"
				c.want.stderr = "oops\n"
			}
			if plain != c.want {
				t.Fatalf("the plain run: %+v, want %+v", plain, c.want)
			}
			supervised := runOnce(t, c.argv[0], c.argv[1:], true)
			if supervised != plain {
				t.Errorf("plainly:      %+v\nsupervised: %+v", plain, supervised)
			}
		})
	}
}

// BenchmarkStartingACLIRun is the supervisor's cost: a trivial CLI started,
// read to its end and reaped, plainly and under the supervisor (this test
// binary re-executed; massgen-mcp, larger, takes a little longer).
func BenchmarkStartingACLIRun(b *testing.B) {
	for _, supervised := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "supervised"}[supervised], func(b *testing.B) {
			for b.Loop() {
				p, err := startProcess(exec.Command("true"), newTail(1024), !supervised)
				if err != nil {
					b.Fatal(err)
				}
				var out bytes.Buffer
				out.ReadFrom(p.stdout)
				<-p.exited
				p.stdout.Close()
			}
		})
	}
}
