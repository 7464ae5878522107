//go:build linux

package cliagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/await"
)

// cliParent is the test binary run as a server that starts a CLI run, the
// shell script given ($1 is pidFile, where the script writes the pid to
// watch), unsandboxed, or in the bwrap sandbox when sandboxed, then waits to
// be killed.
func cliParent(sandboxed bool, script, pidFile string) int {
	cmd, err := scriptCommand(sandboxed, script, pidFile)
	if err == nil {
		_, err = startProcess(cmd, newTail(1024), sandboxed)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {}
}

// scriptCommand is the command of a CLI run that is sh -c script with the
// pid file as $1, plainly or in the bwrap sandbox, whose workspace is the
// pid file's directory.
func scriptCommand(sandboxed bool, script, pidFile string) (*exec.Cmd, error) {
	if !sandboxed {
		return exec.Command("sh", "-c", script, "sh", pidFile), nil
	}
	dir := filepath.Dir(pidFile)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	c := Confinement{Workspace: dir, Home: home, Env: []string{"PATH=/usr/bin:/bin"}}
	work, _ := Bubblewrap{}.Paths(c)
	return Bubblewrap{}.Command(context.Background(), c, []string{"sh", "-c", script, "sh", filepath.Join(work, filepath.Base(pidFile))})
}

// killServerUnder runs cliParent in a process of its own (mode cli-parent or
// cli-parent-sandboxed), waits for the pid its script writes, SIGKILLs the
// server and returns the pid read through find (the pid file's content in,
// the host's pid out).
func killServerUnder(t *testing.T, mode, script string, find func(string) int) int {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	parent := exec.Command(os.Args[0], mode, script, pidFile)
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed once the server is reaped; its stderr says why it ended
	go func() { _ = parent.Wait(); close(exited) }()
	t.Cleanup(func() { _ = parent.Process.Kill(); <-exited })
	var pid int
	await.Until(t, "the server's CLI run starting what the test watches", await.Slow, func() bool {
		if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
			pid = find(strings.TrimSpace(string(data)))
		}
		return pid != 0
	}, exited)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // a failed test leaves nothing
	_ = parent.Process.Kill()
	<-exited
	return pid
}

// hostPid reads a pid file written outside any PID namespace.
func hostPid(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// dies fails the test unless pid is gone within 5 s.
func dies(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) outlived its end by 5 s", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestACLIRunDiesWithTheServerThatStartedIt: an unsandboxed CLI run whose
// server is SIGKILLed is killed (its supervisor's parent-death signal);
// before, it went on calling its model, at the user's expense, until its
// step ended.
func TestACLIRunDiesWithTheServerThatStartedIt(t *testing.T) {
	cli := killServerUnder(t, "cli-parent", `echo $$ > "$1"; exec sleep 120`, hostPid)
	dies(t, cli, "the CLI run of a killed server")
}

// alive tells whether pid runs (a zombie, dead but not yet reaped by its
// new parent, does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
