//go:build linux

package coordination

import (
	"os"
	"testing"
)

// TestAReusedPidIsNotTakenForTheHolder: a lease names its holder's pid and
// start time, so a live process with the same pid but another start time is
// not the holder.
func TestAReusedPidIsNotTakenForTheHolder(t *testing.T) {
	start, ok := ProcessStart(os.Getpid())
	if !ok || start == 0 {
		t.Fatalf("ProcessStart(self) = %d, %v", start, ok)
	}
	if ProcessGone(os.Getpid(), start) {
		t.Error("this process, with its own start time, is gone")
	}
	if !ProcessGone(os.Getpid(), start+1) {
		t.Error("a process with this pid but another start time is taken for the holder")
	}
	if !ProcessGone(1<<22+7, start) { // above pid_max's ceiling: never a live pid
		t.Error("a pid no process has is not gone")
	}
}

func TestProcStatWithParenthesesInTheCommandName(t *testing.T) {
	line := []byte("42 (a) b) (c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10\n")
	if n, ok := parseProcStart(line); !ok || n != 987654 {
		t.Errorf("parseProcStart = %d, %v; want 987654", n, ok)
	}
}

// TestThisProcessNamesItsOwnStart: the owner a lease records carries this
// process's start time (read once, then kept), so the reused-pid check
// above holds for leases this process takes.
func TestThisProcessNamesItsOwnStart(t *testing.T) {
	want, ok := ProcessStart(os.Getpid())
	if !ok {
		t.Fatal("cannot read this process's start time")
	}
	for range 2 { // the first reads /proc, the second is kept
		if o := ThisProcess("x"); o.PID != os.Getpid() || o.ProcStart != want || o.ID != "x" || o.Host != ThisHost() {
			t.Fatalf("ThisProcess = %+v; want pid %d started at %d", o, os.Getpid(), want)
		}
	}
	if ProcessGone(ThisProcess("x").PID, ThisProcess("x").ProcStart) {
		t.Error("the owner this process records is taken for a gone process")
	}
}
