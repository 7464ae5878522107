package workspace

import (
	"fmt"
	"os"
	"path/filepath"
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

// BenchmarkApply is applying a winner that changed every file of a
// 1,000-file project in 20 directories: the checks before each unit (a
// parent walk and a hash per file) should stay small beside the writes.
func BenchmarkApply(b *testing.B) {
	proj := b.TempDir()
	put := func(dir, content string) {
		for i := range 1000 {
			p := filepath.Join(dir, fmt.Sprintf("d%02d/sub/f%03d.txt", i%20, i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content+p), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	put(proj, "base ")
	tm := NewTeam(b.TempDir(), []Context{{Path: proj, Permission: Write}}, "")
	if err := tm.Start(); err != nil {
		b.Fatal(err)
	}
	live, err := tm.Prepare("agent_a")
	if err != nil {
		b.Fatal(err)
	}
	put(live, "winner ")
	stage, m, err := tm.Stage("agent_a", 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(stage, tm.StepDir("agent_a", 1)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		put(proj, "base ")
		b.StartTimer()
		ap, err := tm.Apply(m, tm.SnapshotDir("agent_a", 1))
		if err != nil || len(ap.Written) != 1000 {
			b.Fatalf("%v: %d written, %+v", err, len(ap.Written), ap.Conflicts[:min(1, len(ap.Conflicts))])
		}
	}
}
