package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestASnapshotRefusesAWorkspaceOfMoreDirectoriesThanItsCap: directories
// count against a cap of their own (the manifest lists none, but each
// costs every snapshot a mkdir and an fsync), refused with what to do
// before anything is made in the stage.
func TestASnapshotRefusesAWorkspaceOfMoreDirectoriesThanItsCap(t *testing.T) {
	live := t.TempDir()
	for i := 0; i < 50; i++ {
		if err := os.Mkdir(filepath.Join(live, fmt.Sprintf("d%04d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stage := filepath.Join(t.TempDir(), "stage")
	_, err := Snapshot(DirBlobs{}, live, stage, nil, "", Limits{MaxFiles: 100, MaxDirs: 10, MaxBytes: 1 << 10})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 10 directories") || !strings.Contains(err.Error(), "remove") {
		t.Fatalf("Snapshot of 50 directories under a cap of 10 = %v; want ErrTooLarge saying what to remove", err)
	}
	if _, err := os.Lstat(stage); !os.IsNotExist(err) {
		t.Errorf("the refused snapshot made its stage (%v)", err)
	}
	if DefaultLimits.MaxDirs <= 0 {
		t.Errorf("DefaultLimits has no cap on directories: %+v", DefaultLimits)
	}
}

// TestTheSnapshotCapsStopTheWalkBeforeItHoldsTheWholeWorkspace: a
// workspace far over the file cap, spread over directories or in one, is
// refused once the walk has passed the cap, so what the walk allocates
// grows with the cap, not with the workspace.
func TestTheSnapshotCapsStopTheWalkBeforeItHoldsTheWholeWorkspace(t *testing.T) {
	const n = 8000
	for _, spread := range []int{200, 1} {
		t.Run(fmt.Sprintf("in %d directories", spread), func(t *testing.T) {
			live := t.TempDir()
			for i := 0; i < n; i++ {
				d := filepath.Join(live, fmt.Sprintf("d%03d", i%spread))
				if i < spread {
					if err := os.Mkdir(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("a-rather-long-file-name-%06d.txt", i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			root, err := os.OpenRoot(live)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err = walk(root, nil, Limits{MaxFiles: 100, MaxDirs: 100}, nil)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("walk of %d files under a cap of 100 = %v; want ErrTooLarge", n, err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Fatalf("walk allocated %d KiB for %d files under a cap of 100: it grows with the workspace, not the cap", grew>>10, n)
			}
		})
	}
}

// fifoSwapper is DirBlobs that, when asked to Keep (after the walk, before
// the files are opened), turns one file into a FIFO: what a process still
// running in the workspace can do between the walk and the copy.
type fifoSwapper struct {
	DirBlobs
	path string
}

func (k fifoSwapper) Keep([]string) error {
	os.Remove(k.path)
	return syscall.Mkfifo(k.path, 0o644)
}

// TestAFileSwappedForAFIFOAfterTheWalkIsRefusedNotWaitedOn: the snapshot
// opens the files it puts without blocking and checks what it opened, so
// a FIFO that took a changed file's place is refused with what to do, and
// the step does not hang on a writer that never comes.
func TestAFileSwappedForAFIFOAfterTheWalkIsRefusedNotWaitedOn(t *testing.T) {
	live := t.TempDir()
	write(t, live, "kept.txt", "kept")
	write(t, live, "victim.txt", "v1")
	age(t, live) // kept.txt is then shared, so the snapshot asks Keep
	dir := t.TempDir()
	prevDir := filepath.Join(dir, "001")
	prev, err := Snapshot(DirBlobs{}, live, prevDir, nil, "", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "victim.txt", "v2 changed") // so it is put anew
	victim := filepath.Join(live, "victim.txt")
	done := make(chan error, 1)
	go func() {
		_, err := Snapshot(fifoSwapper{path: victim}, live, filepath.Join(dir, "002"), prev, filepath.Join(prevDir, "workspace"), DefaultLimits)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "victim.txt") || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Snapshot = %v; want victim.txt refused as not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		// A writer's open lets the blocked read end go.
		if f, err := os.OpenFile(victim, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("the snapshot hung opening a FIFO that took a file's place after the walk")
	}
}

// grower is DirBlobs that, when asked to Keep (after the walk, before the
// files are copied), makes one file larger: a process still writing it.
type grower struct {
	DirBlobs
	path string
	by   int
}

func (g grower) Keep([]string) error {
	f, err := os.OpenFile(g.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(make([]byte, g.by))
	return err
}

// TestAFileGrowingPastTheByteCapWhileCopiedIsRefused: the copy reads to
// the end of a file, so one that grew after the walk is counted again as
// copied, and a manifest over the cap is never recorded.
func TestAFileGrowingPastTheByteCapWhileCopiedIsRefused(t *testing.T) {
	live := t.TempDir()
	write(t, live, "kept.txt", "kept")
	write(t, live, "log.txt", "v1")
	age(t, live)
	dir := t.TempDir()
	prevDir := filepath.Join(dir, "001")
	lim := Limits{MaxFiles: 10, MaxDirs: 10, MaxBytes: 2 << 20}
	prev, err := Snapshot(DirBlobs{}, live, prevDir, nil, "", lim)
	if err != nil {
		t.Fatal(err)
	}
	write(t, live, "log.txt", "v2 changed") // so it is put anew
	blobs := grower{path: filepath.Join(live, "log.txt"), by: 3 << 20}
	m, err := Snapshot(blobs, live, filepath.Join(dir, "002"), prev, filepath.Join(prevDir, "workspace"), lim)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "grew") {
		var total int64
		if m != nil {
			for _, f := range m.Files {
				total += f.Bytes
			}
		}
		t.Fatalf("Snapshot = %v, a manifest of %d bytes under a cap of %d; want ErrTooLarge saying the files grew", err, total, lim.MaxBytes)
	}
}
