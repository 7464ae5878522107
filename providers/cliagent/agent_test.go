package cliagent

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSweepRemovesOnlyAgentsIdleForLong(t *testing.T) {
	dir := t.TempDir()
	old, fresh, other := filepath.Join(dir, "0123456789abcdef"), filepath.Join(dir, "fedcba9876543210"), filepath.Join(dir, "keep")
	for _, d := range []string{old, fresh, other} {
		os.MkdirAll(filepath.Join(d, "home"), 0o700)
	}
	long := time.Now().Add(-40 * 24 * time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(other, long, long)
	sweep(dir, time.Now().Add(-agentIdle))
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("an agent idle for 40 days is kept")
	}
	for _, d := range []string{fresh, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed", d)
		}
	}
}
