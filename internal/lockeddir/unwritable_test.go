package lockeddir

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
)

// unwritableSibling fills dir+sibling as a sandboxed agent may leave what
// it writes (a CLI run's HOME): a directory of mode 0 holding a file, one
// of 0555, and a symlink to outside, a directory of the test's that must
// keep its files and mode. The test's cleanup can remove whatever is left.
func unwritableSibling(t *testing.T, dir string) (outside string) {
	t.Helper()
	outside = filepath.Join(t.TempDir(), "outside")
	s := dir + sibling
	for _, f := range []string{filepath.Join(s, "none", "a"), filepath.Join(s, "ro", "b"), filepath.Join(outside, "kept")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(s, "ro", "out")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(filepath.Dir(dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
	})
	for d, mode := range map[string]fs.FileMode{filepath.Join(s, "none"): 0, filepath.Join(s, "ro"): 0o555, outside: 0o555} {
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	return outside
}

func outsideIntact(t *testing.T, outside string) {
	t.Helper()
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("the directory a symlink pointed to changed: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "kept")); err != nil {
		t.Errorf("a file a symlink pointed to went: %v", err)
	}
}

// TestReleaseRemovesASiblingWithADirectoryOfModeZero: a sandboxed agent
// owns what it writes in its run's HOME and may chmod 0 a directory there;
// a server not run as root could not list it, so Release left the HOME and
// kept the lock file, and every sweep after tried and failed again, each
// such run's files kept for good. It gives the directories back their
// owner's bits as it goes, following no symlink.
func TestReleaseRemovesASiblingWithADirectoryOfModeZero(t *testing.T) {
	base := t.TempDir()
	dir, lock, err := Make(base, prefix)
	if err != nil {
		t.Fatal(err)
	}
	outside := unwritableSibling(t, dir)
	unprivileged.Do(t, func() { err = Release(dir, lock, sibling) })
	if err != nil {
		t.Errorf("Release: %v", err)
	}
	for _, p := range []string{dir, dir + sibling, dir + lockSuffix} {
		if exists(t, p) {
			t.Errorf("Release left %s", filepath.Base(p))
		}
	}
	outsideIntact(t, outside)
}

// TestASweepRemovesADeadHoldersSiblingWithADirectoryOfModeZero: the same
// for a run killed mid-way, whose files the next run's sweep takes.
func TestASweepRemovesADeadHoldersSiblingWithADirectoryOfModeZero(t *testing.T) {
	base := t.TempDir()
	dead := killedHolder(t, base)
	outside := unwritableSibling(t, dead)
	unprivileged.Do(t, func() { Sweep(base, prefix, sibling) })
	for _, p := range []string{dead, dead + sibling, dead + lockSuffix} {
		if exists(t, p) {
			t.Errorf("a dead holder's %s survived the sweep", filepath.Base(p))
		}
	}
	outsideIntact(t, outside)
}
