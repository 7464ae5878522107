package wholefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// only lists dir's names, to show no temp is left behind.
func only(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestReplaceWritesTheNewFileWithItsModeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := wholefile.Replace(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new" {
		t.Fatalf("read %q, %v; want new", b, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if names := only(t, dir); len(names) != 1 {
		t.Errorf("dir holds %v, want only status.json", names)
	}
}

func TestCreateNeverReplacesAndOfManyRacersOneWins(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "answer.json")
	var wg sync.WaitGroup
	wins := make(chan string, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := string(rune('a' + i))
			err := wholefile.Create(path, []byte(v), 0o600)
			switch {
			case err == nil:
				wins <- v
			case !errors.Is(err, fs.ErrExist):
				t.Errorf("racer %s: %v, want fs.ErrExist", v, err)
			}
		}()
	}
	wg.Wait()
	close(wins)
	var won []string
	for v := range wins {
		won = append(won, v)
	}
	if len(won) != 1 {
		t.Fatalf("%d racers won (%v), want exactly one", len(won), won)
	}
	if b, _ := os.ReadFile(path); string(b) != won[0] {
		t.Errorf("file holds %q, the winner wrote %q", b, won[0])
	}
	if names := only(t, dir); len(names) != 1 {
		t.Errorf("dir holds %v, want only answer.json", names)
	}
}

func TestAFailedWriteLeavesNothingAndKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory where the file should be: the rename fails.
	blocked := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(blocked, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := wholefile.Replace(blocked, []byte("new"), 0o644); err == nil {
		t.Fatal("replacing a non-empty directory succeeded")
	}
	if err := wholefile.Replace(filepath.Join(dir, "missing", "y"), []byte("new"), 0o644); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the old file reads %q", b)
	}
	if names := only(t, dir); len(names) != 2 {
		t.Errorf("dir holds %v, want x and sub only (no temp left)", names)
	}
}

// TestSweepRemovesOnlyTheOldTempsOfItsFiles: crashes' leftovers beside
// the files go, in one sweep of their directory; a temp being written now,
// another file's temp, the files themselves and a directory that merely
// looks like a temp stay.
func TestSweepRemovesOnlyTheOldTempsOfItsFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(name string, at time.Time) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("answer.txt", old)
	write(".answer.txt.tmp-111", old)        // a crash's leftover
	write(".answer.txt.tmp-222", time.Now()) // a writer at work
	write(".metadata.json.tmp-333", old)     // a crash's leftover of the other file
	write(".summary.txt.tmp-444", old)       // a file the sweep is not for
	if err := os.Mkdir(filepath.Join(dir, ".answer.txt.tmp-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	gone := wholefile.Sweep(dir, time.Now().Add(-time.Minute), wholefile.TempsOf("answer.txt", "metadata.json"))
	if want := []string{filepath.Join(dir, ".answer.txt.tmp-111"), filepath.Join(dir, ".metadata.json.tmp-333")}; !slices.Equal(gone, want) {
		t.Errorf("swept %v; want the two leftovers %v", gone, want)
	}
	want := []string{".answer.txt.tmp-222", ".answer.txt.tmp-dir", ".summary.txt.tmp-444", "answer.txt"}
	if got := only(t, dir); !slices.Equal(got, want) {
		t.Errorf("left %v; want %v", got, want)
	}
}

// TestSweepFuncRemovesWhatItsRulePicksDirectoriesWhole: the rule is the
// caller's, and a temp directory goes with what it holds.
func TestSweepFuncRemovesWhatItsRulePicksDirectoriesWhole(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".001.tmp-x", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".001.tmp-x/sub/answer.json", ".status.json.tmp-y", "status.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gone := wholefile.SweepFunc(dir, func(de fs.DirEntry) bool { return de.Name() != "status.json" })
	if want := []string{filepath.Join(dir, ".001.tmp-x"), filepath.Join(dir, ".status.json.tmp-y")}; !slices.Equal(gone, want) {
		t.Errorf("swept %v; want %v", gone, want)
	}
	if got := only(t, dir); !slices.Equal(got, []string{"status.json"}) {
		t.Errorf("left %v; want only status.json", got)
	}
	if gone := wholefile.SweepFunc(filepath.Join(dir, "missing"), func(fs.DirEntry) bool { return true }); gone != nil {
		t.Errorf("a missing directory swept %v", gone)
	}
}

// TestCreateLeavesWhatIsThereAndNoTemp: a file, an empty directory or a
// symlink (even a dangling one) at the name stands, which a plain rename
// would replace, and the loser's temp is gone.
func TestCreateLeavesWhatIsThereAndNoTemp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		there func(path string) error
	}{
		{"a file", func(p string) error { return os.WriteFile(p, []byte("old"), 0o644) }},
		{"an empty directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"a dangling symlink", func(p string) error { return os.Symlink("nowhere", p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "answer.json")
			if err := tc.there(path); err != nil {
				t.Fatal(err)
			}
			before, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			err = wholefile.Create(path, []byte("new"), 0o600)
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("Create over %s: %v, want an error matching fs.ErrExist", tc.name, err)
			}
			after, err := os.Lstat(path)
			if err != nil || !os.SameFile(before, after) {
				t.Errorf("%s at the name did not stand (%v)", tc.name, err)
			}
			if names := only(t, dir); !slices.Equal(names, []string{"answer.json"}) {
				t.Errorf("dir holds %v, want only answer.json (the temp removed)", names)
			}
		})
	}
}

// TestSyncDirTakesADirectoryThatCannotBeSynced: procfs has no fsync for
// its directories (fsync(2) fails with EINVAL), as some network and FUSE
// filesystems have none; SyncDir takes that for kept, not for a failed
// write. Other failures still are errors.
func TestSyncDirTakesADirectoryThatCannotBeSynced(t *testing.T) {
	const dir = "/proc/self"
	d, err := os.Open(dir)
	if err != nil {
		t.Skipf("no procfs to sync a directory of (%v); the test needs %s, where fsync(2) fails with EINVAL", err, dir)
	}
	err = d.Sync()
	d.Close()
	if !errors.Is(err, syscall.EINVAL) {
		t.Skipf("fsync(2) of %s returned %v, not EINVAL: this system cannot show a directory that cannot be synced", dir, err)
	}
	if err := wholefile.SyncDir(dir); err != nil {
		t.Errorf("SyncDir(%s) = %v; a directory whose filesystem cannot sync it (EINVAL) is not an error", dir, err)
	}
	if err := wholefile.SyncDir(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncDir of a missing directory = %v, want an error matching fs.ErrNotExist", err)
	}
}
