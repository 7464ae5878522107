package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestADiscardLeavesADirectoryASessionMadeAgainClaimedMeanwhile: a sweep
// finds a deleted session's directory (its marker names the deleted
// incarnation) and, before it removes it, a step of the session made again
// under the id claims it and starts working there: the sweep removes
// nothing, and the step's workspace is whole.
func TestADiscardLeavesADirectoryASessionMadeAgainClaimedMeanwhile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "reuse")
	old := teamOf(dir, "2026-01-01T00:00:00Z")
	if _, err := old.Prepare("agent_a"); err != nil {
		t.Fatal(err)
	}
	marker, err := Marker(dir) // what the sweep read, and decided on
	if err != nil || !Stale(marker, true, true, "2026-02-01T00:00:00Z") {
		t.Fatalf("the marker reads %q (%v), not stale against the session made again", marker, err)
	}
	live, err := teamOf(dir, "2026-02-01T00:00:00Z").Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "work.txt", "the new session's work")
	if _, removed, err := DiscardSession(dir, marker, true); err != nil || removed {
		t.Fatalf("the discard removed the claimed directory: removed %v, %v", removed, err)
	}
	if got := read(t, filepath.Join(live, "work.txt")); got != "the new session's work" {
		t.Errorf("the step's work.txt reads %q", got)
	}
}

// TestADiscardRacingClaimsNeverClearsTheClaimedDirectory: a sweep's discard
// of a deleted incarnation's directory and the first steps of the session
// made again run at once, many times: whichever goes first, every step's
// file is in its workspace after, and the directory is the new session's.
func TestADiscardRacingClaimsNeverClearsTheClaimedDirectory(t *testing.T) {
	for i := range 50 {
		dir := filepath.Join(t.TempDir(), "sessions", "reuse")
		if _, err := teamOf(dir, "2026-01-01T00:00:00Z").Prepare("agent_a"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			if _, _, err := DiscardSession(dir, "2026-01-01T00:00:00Z", true); err != nil {
				t.Error(err)
			}
		}()
		for _, agent := range []string{"agent_a", "agent_b"} {
			go func() {
				defer wg.Done()
				live, err := teamOf(dir, "2026-02-01T00:00:00Z").Prepare(agent)
				if err == nil {
					err = os.WriteFile(filepath.Join(live, "mine.txt"), []byte(agent), 0o644)
				}
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		for _, agent := range []string{"agent_a", "agent_b"} {
			if got, err := os.ReadFile(filepath.Join(teamOf(dir, "").Live(agent), "mine.txt")); err != nil || string(got) != agent {
				t.Fatalf("round %d: %s's mine.txt reads %q (%v): the discard cleared a claimed directory", i, agent, got, err)
			}
		}
		if m, err := Marker(dir); err != nil || m != "2026-02-01T00:00:00Z" {
			t.Fatalf("round %d: the marker reads %q (%v)", i, m, err)
		}
	}
}

// TestADiscardRemovesReadOnlyDirectoriesAndLeavesNothingAside: a deleted
// session's directory with an agent's read-only tree in it goes whole, the
// size of its files reported, and nothing stays hidden beside it.
func TestADiscardRemovesReadOnlyDirectoriesAndLeavesNothingAside(t *testing.T) {
	sessions := filepath.Join(t.TempDir(), "sessions")
	dir := filepath.Join(sessions, "gone")
	live, err := teamOf(dir, "2026-01-01T00:00:00Z").Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "locked/a.txt", "12345")
	if err := os.Chmod(filepath.Join(live, "locked"), 0o555); err != nil {
		t.Fatal(err)
	}
	freed, removed, err := DiscardSession(dir, "2026-01-01T00:00:00Z", true)
	if err != nil || !removed || freed < 5 {
		t.Fatalf("freed %d, removed %v, %v", freed, removed, err)
	}
	if ents, _ := os.ReadDir(sessions); len(ents) != 0 {
		t.Errorf("the sessions directory holds %v; want nothing", names(ents))
	}
}

// TestATeamDiscardsItsOwnAndEarlierDirectoriesOnly: the service's prune
// drops its copy of the session it deleted, or of an earlier one of the
// id, never a later session's made again and claimed here meanwhile, nor
// one with no marker.
func TestATeamDiscardsItsOwnAndEarlierDirectoriesOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "reuse")
	deleted := teamOf(dir, "2026-01-01T00:00:00Z")
	if _, err := teamOf(dir, "2026-02-01T00:00:00Z").Prepare("agent_a"); err != nil {
		t.Fatal(err)
	}
	if _, removed, err := deleted.DiscardDir(); err != nil || removed {
		t.Fatalf("a Team of an earlier incarnation removed a later one's directory: %v, %v", removed, err)
	}
	if _, removed, err := teamOf(dir, "2026-02-01T00:00:00Z").DiscardDir(); err != nil || !removed {
		t.Fatalf("the Team's own directory was not removed: %v, %v", removed, err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory is still there: %v", err)
	}
	// One that does not say whose it is (a file store's session of the id
	// in a state directory the replica shares) is left, as the sweep
	// leaves it.
	unmarked := filepath.Join(t.TempDir(), "sessions", "shared")
	if err := os.MkdirAll(unmarked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unmarked, "session.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, removed, err := teamOf(unmarked, "2026-02-01T00:00:00Z").DiscardDir(); err != nil || removed {
		t.Fatalf("a directory with no marker was removed: %v, %v", removed, err)
	}
	if _, err := os.Stat(filepath.Join(unmarked, "session.json")); err != nil {
		t.Errorf("the unmarked directory's file is gone: %v", err)
	}
}

// TestASweepAsideSparesTheDirectoryAClaimIsMovingInto: what a claim made
// to move a directory aside, empty and made a moment ago, is the one it
// renames into next (under a lock a sweep does not hold): a sweep of what
// was moved aside leaves it, and removes one a crash left empty a while
// ago and one that holds what was moved.
func TestASweepAsideSparesTheDirectoryAClaimIsMovingInto(t *testing.T) {
	sessions := filepath.Join(t.TempDir(), "sessions")
	dir := filepath.Join(sessions, "x")
	fresh := filepath.Join(sessions, ".x.stale-fresh")
	old := filepath.Join(sessions, ".x.stale-old")
	full := filepath.Join(sessions, ".x.stale-full")
	for _, d := range []string{fresh, old} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, full, "old/a.txt", "moved")
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	ClearAside(dir)
	if _, err := os.Lstat(fresh); err != nil {
		t.Errorf("the directory a claim is moving into was removed: %v", err)
	}
	for _, d := range []string{old, full} {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there: %v", d, err)
		}
	}
}
