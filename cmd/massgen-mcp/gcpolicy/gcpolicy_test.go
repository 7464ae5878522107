package gcpolicy

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestTuneLeavesAChosenGOGCAlone(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))

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

func TestTuneSetsASoftMemoryLimitUnlessOneIsChosen(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Setenv("GOMEMLIMIT", "")
	if got := Tune(); !strings.Contains(got, "GOMEMLIMIT=192MiB") {
		t.Errorf("Tune() = %q", got)
	}
	if l := debug.SetMemoryLimit(-1); l != ServerMemoryLimit {
		t.Errorf("with GOMEMLIMIT unset the limit is %d, want %d", l, ServerMemoryLimit)
	}

	debug.SetMemoryLimit(1 << 40)
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := Tune(); !strings.Contains(got, "GOMEMLIMIT=1GiB (from the environment)") {
		t.Errorf("Tune() = %q", got)
	}
	if l := debug.SetMemoryLimit(-1); l != 1<<40 {
		t.Errorf("with GOMEMLIMIT set the limit changed to %d", l)
	}
}
