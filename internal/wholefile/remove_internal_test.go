package wholefile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
)

// lockedTree makes under dir what an agent may leave: tree/ with a 0555
// directory of read-only files, a directory of mode 0 and one of 0300
// (write and search, no read) inside it, and a symlink to outside, a 0555
// directory beside tree/ that is not part of it. It returns tree and
// outside, and opens them again for the test's cleanup whatever happens.
func lockedTree(t *testing.T, dir string) (tree, outside string) {
	t.Helper()
	tree, outside = filepath.Join(dir, "tree"), filepath.Join(dir, "outside")
	files := []string{"tree/ro/a.go", "tree/ro/none/b.go", "tree/ro/wonly/c.go", "outside/kept.txt"}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(tree, "ro", "out")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	for d, mode := range map[string]fs.FileMode{"tree/ro/none": 0, "tree/ro/wonly": 0o300, "tree/ro": 0o555, "outside": 0o555} {
		if err := os.Chmod(filepath.Join(dir, d), mode); err != nil {
			t.Fatal(err)
		}
	}
	return tree, outside
}

// TestATreeWithReadOnlyDirectoriesIsRemovedWhole: as a user to whom the
// modes apply (root too, its overrides dropped), the read-only
// directories go with the rest, and what a symlink in the tree points to
// stays as it was.
func TestATreeWithReadOnlyDirectoriesIsRemovedWhole(t *testing.T) {
	dir := t.TempDir()
	tree, outside := lockedTree(t, dir)
	var err error
	unprivileged.Do(t, func() { err = RemoveAll(tree) })
	if err != nil {
		t.Fatalf("RemoveAll: %v", err)
	}
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Fatalf("the tree is still there (%v)", err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o555 {
		t.Fatalf("the directory a symlink in the tree pointed to changed: %v, %v", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(outside, "kept.txt")); err != nil {
		t.Fatalf("a file outside the tree went with it: %v", err)
	}
}

// TestMakingATreeRemovableGivesOnlyItsDirectoriesTheOwnersBits pins the
// walk RemoveAllIn falls back on, as any user (root included, whom the
// modes never stop): every directory of the tree gets rwx for its owner,
// its other bits kept; files keep their modes; a symlink is not followed.
func TestMakingATreeRemovableGivesOnlyItsDirectoriesTheOwnersBits(t *testing.T) {
	dir := t.TempDir()
	_, _ = lockedTree(t, dir)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := makeRemovable(root, "tree"); err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{
		"tree": 0o755, "tree/ro": 0o755, "tree/ro/none": 0o700, "tree/ro/wonly": 0o700,
		"tree/ro/a.go": 0o444, "tree/ro/none/b.go": 0o444, "outside": 0o555,
	}
	for p, mode := range want {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, mode)
		}
	}
}

// TestSweepFuncRemovesALeftoverHoldingAReadOnlyDirectory: a replica's
// stale session directory (workspace.sweepAside) or a temp directory goes
// with the read-only directories an agent left in it.
func TestSweepFuncRemovesALeftoverHoldingAReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	_, outside := lockedTree(t, dir)
	var gone []string
	unprivileged.Do(t, func() {
		gone = SweepFunc(dir, func(de fs.DirEntry) bool { return de.Name() == "tree" })
	})
	if len(gone) != 1 || gone[0] != filepath.Join(dir, "tree") {
		t.Fatalf("SweepFunc removed %q, want the tree", gone)
	}
	if _, err := os.Stat(filepath.Join(outside, "kept.txt")); err != nil {
		t.Fatalf("a file outside the leftover went with it: %v", err)
	}
}
