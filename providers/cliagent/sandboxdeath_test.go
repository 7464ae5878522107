//go:build linux

package cliagent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/await"
)

// TestASandboxedCLIRunsCommandsDieWithItsRun: bwrap runs with
// --die-with-parent (under the supervisor package sandbox puts every
// command under, which closes the moment before bwrap's own parent-death
// signal is set), and its PID namespace's init takes every process of the
// sandbox with it, a daemon
// that left the CLI's session included, whether the server that started it
// is SIGKILLed, the run is killed (a timeout, a cancel, a limit), or the CLI
// exits.
func TestASandboxedCLIRunsCommandsDieWithItsRun(t *testing.T) {
	sandboxed(t)
	// Inside the sandbox the daemon's pid is its namespace's; the host finds
	// it by its command line, a sleep of a length no other process has.
	var daemon string
	var byCommandLine func(string) int
	fresh := func() {
		length := fmt.Sprintf("%d.%09d", 100+os.Getpid()%100, time.Now().Nanosecond())
		daemon = `(setsid sh -c 'echo $$ > "$1"; exec sleep ` + length + `' sh "$1" &)`
		byCommandLine = func(string) int { return pidRunning("sleep\x00" + length + "\x00") }
	}
	t.Run("the server dies", func(t *testing.T) {
		fresh()
		pid := killServerUnder(t, "cli-parent-sandboxed", daemon+`; exec sleep 120`, byCommandLine)
		dies(t, pid, "the sandboxed CLI run's daemon")
	})
	run := func(t *testing.T, script string) (*process, int, string) {
		fresh()
		script = strings.ReplaceAll(script, "DAEMON", daemon)
		pidFile := filepath.Join(t.TempDir(), "pid")
		cmd, err := scriptCommand(true, script, pidFile)
		if err != nil {
			t.Fatal(err)
		}
		p, err := startProcess(cmd, newTail(1024), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.kill(); <-p.exited })
		var pid int
		await.Until(t, "the sandboxed CLI run starting its daemon", await.Slow, func() bool {
			if data, _ := os.ReadFile(pidFile); strings.HasSuffix(string(data), "\n") {
				pid = byCommandLine("")
			}
			return pid > 0
		}, p.exited)
		return p, pid, pidFile
	}
	t.Run("the run is killed", func(t *testing.T) {
		p, pid, _ := run(t, `DAEMON; exec sleep 120`)
		p.kill()
		<-p.exited
		dies(t, pid, "the killed sandboxed CLI run's daemon")
	})
	t.Run("the CLI exits", func(t *testing.T) {
		// The CLI exits once the test has seen its daemon run (a file
		// beside the pid file says so): exiting as soon as the daemon
		// wrote its pid took the daemon down before a loaded machine's
		// test could see it.
		p, pid, pidFile := run(t, `DAEMON; until [ -e "$1.seen" ]; do sleep 0.01; done`)
		if err := os.WriteFile(pidFile+".seen", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		<-p.exited
		dies(t, pid, "the daemon of a sandboxed CLI run that exited")
	})
}

// pidRunning is the pid of a running process whose command line begins
// with cmdline (NULs between its arguments), or 0.
func pidRunning(cmdline string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.HasPrefix(string(b), cmdline) {
			continue
		}
		if pid := hostPid(e.Name()); pid > 0 && alive(pid) {
			return pid
		}
	}
	return 0
}
