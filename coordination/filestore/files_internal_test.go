package filestore

import (
	"testing"
	"time"
)

func TestTimestampsReadLeniently(t *testing.T) {
	want := time.Date(2026, 3, 20, 22, 32, 3, 123456000, time.UTC)
	for _, s := range []string{
		"2026-03-20T22:32:03.123456+00:00", // Python isoformat, aware
		"2026-03-20T22:32:03.123456Z",
		"2026-03-20T23:32:03.123456+01:00",
		"2026-03-20T22:32:03.123456", // Python isoformat, naive: taken as UTC
		"2026-03-20 22:32:03.123456+00:00",
		" 2026-03-20 22:32:03.123456 ",
	} {
		if got := parseStamp(s); !got.Equal(want) {
			t.Errorf("parseStamp(%q) = %v, want %v", s, got, want)
		}
	}
	if got := parseStamp("2026-03-20T22:32:03+00:00"); !got.Equal(want.Truncate(time.Second)) {
		t.Errorf("whole seconds: %v", got)
	}
	for _, s := range []string{"", "yesterday", "1774045923"} {
		if got := parseStamp(s); !got.IsZero() {
			t.Errorf("parseStamp(%q) = %v, want zero", s, got)
		}
	}
}

func TestTimestampsAreWrittenAsPythonIsoformat(t *testing.T) {
	at := time.Date(2026, 3, 20, 23, 32, 3, 123987654, time.FixedZone("CET", 3600))
	if got := stamp(at); got != "2026-03-20T22:32:03.123+00:00" {
		t.Errorf("stamp = %q", got)
	}
}

func TestStepNames(t *testing.T) {
	for n, want := range map[int]string{1: "001", 42: "042", 999: "999", 1000: "1000"} {
		if got := stepName(n); got != want {
			t.Errorf("stepName(%d) = %q, want %q", n, got, want)
		}
		if back, ok := stepNumber(want); !ok || back != n {
			t.Errorf("stepNumber(%q) = %d, %v", want, back, ok)
		}
	}
	for _, name := range []string{"", ".003.tmp-x", "workspace", "00a", "-1", "+1", "1234567890"} {
		if _, ok := stepNumber(name); ok {
			t.Errorf("stepNumber(%q) accepted", name)
		}
	}
}
