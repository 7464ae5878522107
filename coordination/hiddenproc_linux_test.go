//go:build linux

package coordination

import (
	"os"
	"os/exec"
	"testing"
)

// TestAProcessHiddenFromProcIsNotGone: /proc mounted hidepid=invisible (a
// hardened host; hidepid=2) shows a user none of another user's
// processes: their /proc/<pid> is not there, as a dead one's is not. A
// live creator or holder run by another user (a server's service account,
// read by an operator's `status`, or by a replica resuming runs) was taken
// for dead, and its session, about to be started, read interrupted. Only
// the kernel's own answer for the pid (no such process) says gone; a
// process /proc hides is not.
func TestAProcessHiddenFromProcIsNotGone(t *testing.T) {
	hidden := t.TempDir() // a /proc that shows no process: this one hidden
	me := os.Getpid()
	start, ok := ProcessStart(me)
	if !ok {
		t.Skip("no start time to read here")
	}
	if processGone(hidden, me, start) {
		t.Errorf("this process, alive but hidden from /proc, is gone")
	}

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if !processGone(hidden, dead.Process.Pid, 1) {
		t.Errorf("process %d, exited and reaped, is not gone", dead.Process.Pid)
	}
}
