package workspace

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkSnapshot is the snapshot an answer takes of a workspace of 1,000
// files / 50 MB, with 0, 10, 100 or all files changed since the previous
// snapshot: its cost should follow the changed files, not the workspace.
func BenchmarkSnapshot(b *testing.B) {
	for _, changed := range []int{0, 10, 100, 1000} {
		b.Run(fmt.Sprintf("changed=%d", changed), func(b *testing.B) {
			SnapshotBench(b, 1000, 50<<20, changed)
		})
	}
}

// SnapshotBench runs one snapshot per iteration after changing `changed` of
// `files` files totalling `bytes`.
func SnapshotBench(b *testing.B, files int, bytes int64, changed int) {
	tm := NewTeam(b.TempDir(), nil, "")
	live, err := tm.Prepare("agent_a")
	if err != nil {
		b.Fatal(err)
	}
	if err := FillWorkspace(live, files, bytes); err != nil {
		b.Fatal(err)
	}
	time.Sleep(racyWindow + 10*time.Millisecond)
	step := 1
	land := func() {
		stage, _, err := tm.Stage("agent_a", step)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(stage, tm.StepDir("agent_a", step)); err != nil {
			b.Fatal(err)
		}
		step++
	}
	land()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := TouchFiles(live, changed, i); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		land()
	}
}
