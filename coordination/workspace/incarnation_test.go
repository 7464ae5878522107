package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// teamOf is a Team caching, in dir, the session of one incarnation.
func teamOf(dir, incarnation string) *Team {
	t := NewTeam(dir, nil, "")
	t.Incarnation = incarnation
	return t
}

// TestADirectoryAnotherIncarnationLeftIsClearedBeforeUse: a session's
// directory still holding what a deleted session of the same id left (a
// live workspace, a snapshot, a base) is cleared before a session made
// again under that id uses it: its agent starts from nothing, it has no
// snapshot and no base, and nothing of the old one is left beside it. Its
// own files stay from one Team to the next. Before, the new session worked
// in the old one's workspace and served its snapshots as its own.
func TestADirectoryAnotherIncarnationLeftIsClearedBeforeUse(t *testing.T) {
	sessions := filepath.Join(t.TempDir(), "sessions")
	dir := filepath.Join(sessions, "reuse")
	src := t.TempDir()
	write(t, src, "base.txt", "the old base")

	old := teamOf(dir, "2025-01-01T00:00:00Z")
	if err := old.StartFrom(src, ""); err != nil {
		t.Fatal(err)
	}
	live, err := old.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "old.txt", "the deleted session's secret")
	age(t, live)
	stageAndLand(t, old, "agent_a", 1)

	again := teamOf(dir, "2025-06-01T00:00:00Z")
	if m, _, err := again.Base(); err != nil || len(m.Files) != 0 {
		t.Errorf("the new session's base is %+v (%v); want none", m, err)
	}
	if step, m, _, err := again.Latest("agent_a"); err != nil || step != 0 || len(m.Files) != 0 {
		t.Errorf("the new session's latest snapshot is step %d with %+v (%v); want none", step, m, err)
	}
	live, err = again.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(live, "old.txt")); err == nil {
		t.Error("the new session's live workspace holds the deleted session's old.txt")
	}
	write(t, live, "new.txt", "new")
	if ents, _ := os.ReadDir(sessions); len(ents) != 1 || ents[0].Name() != "reuse" {
		t.Errorf("the sessions directory holds %v; want only reuse (the old files removed, not kept aside)", names(ents))
	}

	same := teamOf(dir, "2025-06-01T00:00:00Z")
	if _, err := same.Prepare("agent_a"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(live, "new.txt")); got != "new" {
		t.Errorf("the session's own new.txt reads %q after another Team of it opened", got)
	}
}

// TestADirectoryWithoutItsMarkerIsCleared: a directory that does not say
// whose it is (left by a version before the marker, or a crash before the
// marker was written) cannot be trusted to be this session's, and is
// cleared; it is a cache, and the snapshots are in the Remote.
func TestADirectoryWithoutItsMarkerIsCleared(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "reuse")
	write(t, dir, "agents/agent_a/workspace/old.txt", "whose?")
	live, err := teamOf(dir, "2025-06-01T00:00:00Z").Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(live, "old.txt")); err == nil {
		t.Error("an unmarked directory's old.txt is in the session's live workspace")
	}
	if got := read(t, filepath.Join(dir, IncarnationName)); got != "2025-06-01T00:00:00Z" {
		t.Errorf("the marker reads %q", got)
	}
}

// TestStepsOpeningASessionMadeAgainAtOnceClearItOnce: the agents of a
// session made again under an old id start their first steps in parallel,
// each with a Team of its own; one clears the old directory and none
// clears the new one another has begun to fill.
func TestStepsOpeningASessionMadeAgainAtOnceClearItOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "reuse")
	write(t, dir, "agents/agent_0/workspace/old.txt", "old")
	const agents = 8
	var wg sync.WaitGroup
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := fmt.Sprintf("agent_%d", i)
			live, err := teamOf(dir, "new").Prepare(agent)
			if err == nil {
				err = os.WriteFile(filepath.Join(live, "mine.txt"), []byte(agent), 0o644)
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range agents {
		agent := fmt.Sprintf("agent_%d", i)
		if got, err := os.ReadFile(filepath.Join(teamOf(dir, "new").Live(agent), "mine.txt")); err != nil || string(got) != agent {
			t.Errorf("%s's mine.txt reads %q (%v): another step cleared the session's new directory", agent, got, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(teamOf(dir, "new").Live("agent_0"), "old.txt")); err == nil {
		t.Error("agent_0's live workspace holds the old session's old.txt")
	}
}

func names(ents []os.DirEntry) []string {
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = e.Name()
	}
	return out
}

// TestAnEarlierIncarnationLeavesALaterOnesDirectory: a Team of a session
// deleted and made again since its setup was read (a setup a process kept
// from before) is refused, and the later session's files stay: clearing
// them would throw its agents' work away mid-step (found by review).
func TestAnEarlierIncarnationLeavesALaterOnesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "reuse")
	later := teamOf(dir, "2026-12-05T10:00:00.5Z")
	live, err := later.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "work.txt", "the new session's work")
	_, err = teamOf(dir, "2026-12-05T10:00:00.25Z").Prepare("agent_a")
	if !errors.Is(err, ErrStaleIncarnation) {
		t.Fatalf("a Team of the earlier session = %v; want ErrStaleIncarnation", err)
	}
	if got, err := os.ReadFile(filepath.Join(live, "work.txt")); err != nil || string(got) != "the new session's work" {
		t.Fatalf("the later session's work after the earlier Team: %q, %v", got, err)
	}
}
