package gcpolicy

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestTuneLeavesAChosenGOGCAlone(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	t.Setenv("GOGC", "")
	if got := Tune(); !strings.Contains(got, "GOGC=400") {
		t.Errorf("Tune() = %q", got)
	}
	if p := debug.SetGCPercent(100); p != ServerPercent {
		t.Errorf("with GOGC unset the collector runs at %d, want %d", p, ServerPercent)
	}

	t.Setenv("GOGC", "150")
	if got := Tune(); !strings.Contains(got, "GOGC=150 (from the environment)") {
		t.Errorf("Tune() = %q", got)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("with GOGC set the setting changed to %d", p)
	}
}
