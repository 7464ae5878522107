package cliagent

import "testing"

func TestSetMaxProcessesBoundsTheSharedSlots(t *testing.T) {
	defer SetMaxProcesses(0)
	SetMaxProcesses(3)
	if MaxProcesses() != 3 {
		t.Fatalf("MaxProcesses = %d", MaxProcesses())
	}
	w := sharedSlots()
	if !w.TryAcquire(3) || w.TryAcquire(1) {
		t.Fatal("three slots, not more")
	}
	w.Release(3)
	SetMaxProcesses(0)
	if MaxProcesses() != DefaultMaxProcesses() || DefaultMaxProcesses() < 1 {
		t.Fatalf("0 means the default: %d", MaxProcesses())
	}
}
