package permissions

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkExpireWithNothingLapsed is the look every listing of a
// session's asks makes first (the service's expiry): 200 asks answered,
// one pending, none lapsed, after an earlier expiry (so its marks'
// directory, empty, is there to read).
func BenchmarkExpireWithNothingLapsed(b *testing.B) {
	dir := b.TempDir()
	now := time.Now()
	for i := range 201 {
		r := ApprovalRequest{ID: NewRequestID(), Agent: "agent_a", Action: Action{Kind: Net, Target: "example.com"}, Asked: now.Add(-time.Duration(i) * time.Second), Expires: now.Add(time.Minute)}
		if err := writeJSON(filepath.Join(dir, "requests", r.ID+".json"), r, false); err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			if err := Answer(dir, r.ID, false, "ops", "", now); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := mark(dir, "gone"); err != nil {
		b.Fatal(err)
	}
	if err := unmark(dir, "gone"); err != nil {
		b.Fatal(err)
	}
	record := func(ApprovalRequest, bool) error { return nil }
	for b.Loop() {
		if got, err := Expire(dir, now.Add(-time.Second), record); err != nil || len(got) != 0 {
			b.Fatal(got, err)
		}
	}
}
