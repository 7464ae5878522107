//go:build linux

package coordination

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestAZombieHolderIsGone: a holder SIGKILLed whose parent has not reaped
// it yet (a supervisor that waits late, a container's init that reaps
// slowly) is a zombie: its /proc/<pid>/stat stays, start time and all, but
// it runs nothing and its locks are gone with its files. It is gone, so a
// reader shows its run interrupted at once. Before, it was taken for alive
// until its parent reaped it, and `sessions` said running right after a
// kill -9 while `status` a moment later said interrupted.
func TestAZombieHolderIsGone(t *testing.T) {
	cmd := exec.Command("sleep", "100")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	start, ok := ProcessStart(pid)
	if !ok || start == 0 {
		t.Fatalf("ProcessStart(%d) = %d, %v", pid, start, ok)
	}
	if ProcessGone(pid, start) {
		t.Fatal("a running process is gone")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Not reaped (no Wait) until the check: it stays a zombie.
	for deadline := time.Now().Add(10 * time.Second); procState(t, pid) != 'Z'; {
		if time.Now().After(deadline) {
			t.Fatalf("process %d never became a zombie", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !ProcessGone(pid, start) {
		t.Errorf("a zombie (killed, not yet reaped) holder is not gone")
	}
}

// procState is field 3 of /proc/<pid>/stat.
func procState(t *testing.T, pid int) byte {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	return f[0][0]
}
