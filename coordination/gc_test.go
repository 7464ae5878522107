package coordination

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestTuneGCLeavesAChosenGOGCAlone(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	t.Setenv("GOGC", "")
	if got := TuneGC(); !strings.Contains(got, "GOGC=400") {
		t.Errorf("TuneGC() = %q", got)
	}
	if p := debug.SetGCPercent(100); p != ServerGCPercent {
		t.Errorf("with GOGC unset the collector runs at %d, want %d", p, ServerGCPercent)
	}

	t.Setenv("GOGC", "150")
	if got := TuneGC(); !strings.Contains(got, "GOGC=150 (from the environment)") {
		t.Errorf("TuneGC() = %q", got)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("with GOGC set the setting changed to %d", p)
	}
}
