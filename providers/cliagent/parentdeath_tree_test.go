//go:build linux

package cliagent

import (
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

// cliParentTree is cliParent whose CLI run starts a command of its own (as
// Claude Code's Bash or Codex's exec_command do): a shell that starts a
// long sleep, writes the sleep's pid to pidFile, and waits for it.
func cliParentTree(pidFile string) int {
	sh := exec.Command("sh", "-c", `sleep 120 & echo $! > "$1"; wait`, "sh", pidFile)
	if _, err := startProcess(sh, newTail(1024)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {}
}

// TestACLIRunsCommandsDieWithTheServerThatStartedIt: an unsandboxed CLI run
// whose server is SIGKILLed must not leave the commands it started running
// ("no child outlives the step"): Pdeathsig reaches the CLI's leader only,
// so a command it started (a build, a dev server, a script writing the
// workspace another replica now holds) goes on.
func TestACLIRunsCommandsDieWithTheServerThatStartedIt(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	parent := exec.Command(os.Args[0], "cli-parent-tree", pidFile)
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
			t.Fatal("the server's CLI run never started its command")
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer syscall.Kill(child, syscall.SIGKILL) // a failed test leaves nothing
	_ = parent.Process.Kill()
	_ = parent.Wait()
	for deadline = time.Now().Add(5 * time.Second); alive(child); {
		if time.Now().After(deadline) {
			t.Fatalf("the CLI run's command (pid %d) outlived its killed server by 5 s", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
