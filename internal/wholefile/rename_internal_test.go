package wholefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// renames are the ways RenameNoReplace can go: the system's, and each of
// its fallbacks, which Linux takes only on a filesystem without
// RENAME_NOREPLACE (so they are tested here directly).
var renames = []struct {
	name   string
	rename func(oldpath, newpath string) error
}{
	{"RenameNoReplace", RenameNoReplace},
	{"renameLinked", renameLinked},
	{"renameChecked", renameChecked},
}

// TestRenameNoReplaceNeverReplaces: whatever is at the new name stands,
// including the empty directory and the symlink a plain rename replaces,
// and the old name is kept for the caller to remove.
func TestRenameNoReplaceNeverReplaces(t *testing.T) {
	for _, r := range renames {
		for _, tc := range []struct {
			name     string
			from, to func(path string) error
		}{
			{"a file onto a file", file, file},
			{"a file onto an empty directory", file, emptyDir},
			{"a file onto a dangling symlink", file, dangling},
			{"a directory onto an empty directory", fullDir, emptyDir},
			{"a directory onto a file", fullDir, file},
		} {
			t.Run(r.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				from, to := filepath.Join(dir, "from"), filepath.Join(dir, "to")
				if err := tc.from(from); err != nil {
					t.Fatal(err)
				}
				if err := tc.to(to); err != nil {
					t.Fatal(err)
				}
				was, _ := os.Lstat(to)
				err := r.rename(from, to)
				if !errors.Is(err, fs.ErrExist) {
					t.Fatalf("%v, want an error matching fs.ErrExist", err)
				}
				if !strings.HasPrefix(err.Error(), "cannot rename "+from+" to "+to+": ") {
					t.Errorf("the error %q does not say what could not be renamed", err)
				}
				if is, err := os.Lstat(to); err != nil || !os.SameFile(was, is) {
					t.Errorf("what was at the new name did not stand (%v)", err)
				}
				if _, err := os.Lstat(from); err != nil {
					t.Errorf("the old name is gone: %v", err)
				}
			})
		}
	}
}

// TestRenameNoReplaceRenamesWhenTheNameIsFree: a file or a directory with
// what it holds moves, and the old name is gone; a missing one fails
// matching fs.ErrNotExist.
func TestRenameNoReplaceRenamesWhenTheNameIsFree(t *testing.T) {
	for _, r := range renames {
		for _, tc := range []struct {
			name string
			from func(path string) error
			read string
		}{
			{"a file", file, ""},
			{"a directory", fullDir, "f"},
		} {
			t.Run(r.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				from, to := filepath.Join(dir, "from"), filepath.Join(dir, "to")
				if err := tc.from(from); err != nil {
					t.Fatal(err)
				}
				if err := r.rename(from, to); err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(filepath.Join(to, tc.read)); err != nil || string(b) != "data" {
					t.Errorf("the new name reads %q, %v; want data", b, err)
				}
				if _, err := os.Lstat(from); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the old name is still there (%v)", err)
				}
			})
		}
		t.Run(r.name+"/a missing file", func(t *testing.T) {
			dir := t.TempDir()
			err := r.rename(filepath.Join(dir, "from"), filepath.Join(dir, "to"))
			if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "cannot rename ") {
				t.Errorf("%v, want a sentence matching fs.ErrNotExist", err)
			}
		})
	}
}

// TestRenameLinkedLetsOneOfManyRacersWin: the fallback for a filesystem
// without RENAME_NOREPLACE (NFS) still refuses atomically where it has
// hard links, so Create's guarantee holds there too. The racers start
// together, round after round, so a check-then-rename loses a file to a
// racer in most runs.
func TestRenameLinkedLetsOneOfManyRacersWin(t *testing.T) {
	for round := range 20 {
		dir := t.TempDir()
		to := filepath.Join(dir, "answer.json")
		start := make(chan struct{})
		var wg sync.WaitGroup
		wins := make(chan string, 8)
		for i := range 8 {
			from := filepath.Join(dir, "from"+string(rune('a'+i)))
			if err := os.WriteFile(from, []byte(from), 0o644); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				switch err := renameLinked(from, to); {
				case err == nil:
					wins <- from
				case !errors.Is(err, fs.ErrExist):
					t.Errorf("%s: %v, want fs.ErrExist", from, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		close(wins)
		var won []string
		for from := range wins {
			won = append(won, from)
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d racers won (%v), want exactly one", round, len(won), won)
		}
		if b, _ := os.ReadFile(to); string(b) != won[0] {
			t.Errorf("round %d: the file holds %q, the winner wrote %q", round, b, won[0])
		}
	}
}

func file(p string) error     { return os.WriteFile(p, []byte("data"), 0o644) }
func emptyDir(p string) error { return os.Mkdir(p, 0o755) }
func dangling(p string) error { return os.Symlink("nowhere", p) }

func fullDir(p string) error {
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	return file(filepath.Join(p, "f"))
}
