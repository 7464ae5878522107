//go:build linux

package cliagent

import (
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
)

// cliParent is the test binary run as a server that starts a CLI run (a
// long sleep, unsandboxed) and writes its pid to pidFile, then waits to be
// killed.
func cliParent(pidFile string) int {
	p, err := startProcess(exec.Command("sleep", "120"), newTail(1024))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(p.cmd.Process.Pid)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {}
}

// TestACLIRunDiesWithTheServerThatStartedIt: an unsandboxed CLI run whose
// server is SIGKILLed is killed by the kernel (dieWithParent); before, it
// went on calling its model, at the user's expense, until its step ended.
func TestACLIRunDiesWithTheServerThatStartedIt(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	parent := exec.Command(os.Args[0], "cli-parent", pidFile)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(10 * time.Second)
	for child == 0 {
		if data, err := os.ReadFile(pidFile); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		if time.Now().After(deadline) {
			_ = parent.Process.Kill()
			t.Fatal("the server never started its CLI run")
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer syscall.Kill(child, syscall.SIGKILL) // a failed test leaves nothing
	_ = parent.Process.Kill()
	_ = parent.Wait()
	for deadline = time.Now().Add(5 * time.Second); alive(child); {
		if time.Now().After(deadline) {
			t.Fatalf("the CLI run (pid %d) outlived its killed server by 5 s", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
