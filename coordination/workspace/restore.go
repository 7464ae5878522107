package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Restore makes the live workspace hold exactly the snapshot m (whose files
// are in dir): files the snapshot lacks are removed, files whose fingerprint
// changed since are copied back (fresh copies, never links into the
// snapshot), and untouched files are left alone. A file whose fingerprint
// cannot vouch for it (copied back by an earlier rollback, seeded from the
// base, or racily clean) is read and kept when its content is the
// snapshot's, so a rollback with nothing to undo never copies. It is the rollback after a
// step that did not answer, and the seeding of a new workspace from a base.
func Restore(live, dir string, m *Manifest) error {
	// The directories above it are the server's (agents/<id>/); the
	// workspace itself and what is in it are the agent's.
	if err := os.MkdirAll(filepath.Dir(live), stateDirMode); err != nil {
		return fmt.Errorf("cannot prepare the workspace %s: %w", live, err)
	}
	if err := os.Mkdir(live, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot prepare the workspace %s: %w", live, err)
	}
	root, err := os.OpenRoot(live)
	if err != nil {
		return fmt.Errorf("cannot open the workspace %s: %w", live, err)
	}
	defer root.Close()
	keepDirs := map[string]bool{".": true}
	for _, f := range m.Files {
		for d := parentOf(f.Path); d != ""; d = parentOf(d) {
			keepDirs[d] = true
		}
	}
	// A directory the snapshot lacks is removed whole, so it is never
	// listed (wholefile.RemoveAllIn opens it up if the agent closed it).
	// One it keeps gets its owner's bits back before it is listed: a
	// snapshot records no directory's mode and its own are open, and
	// one the agent made read-only (or unreadable) would refuse the
	// removal and the copies in it to any user but root.
	var drop []string
	var opened error
	open := func(rel string, dir bool) bool {
		if !dir {
			return false
		}
		if !keepDirs[rel] {
			drop = append(drop, rel)
			return true
		}
		if fi, err := root.Lstat(rel); err == nil && fi.IsDir() && fi.Mode().Perm()&0o700 != 0o700 {
			if err := root.Chmod(rel, fi.Mode()|0o700); err != nil {
				opened = errors.Join(opened, fmt.Errorf("cannot roll back %s: %w", rel, err))
			}
		}
		return false
	}
	open(".", true)
	nodes, _, err := walk(root, open, Limits{}, nil)
	if err != nil {
		return fmt.Errorf("cannot list the workspace %s: %w", live, errors.Join(opened, err))
	}
	if opened != nil {
		return opened
	}
	for _, d := range drop {
		if err := removeIn(root, d); err != nil {
			return fmt.Errorf("cannot roll back %s: %w", d, err)
		}
	}
	have := map[string]fs.FileInfo{}
	for _, n := range nodes {
		if n.info.IsDir() {
			continue // kept: every other was dropped
		}
		if _, inSnap := m.Lookup(n.rel); !inSnap {
			if err := removeIn(root, n.rel); err != nil {
				return fmt.Errorf("cannot roll back %s: %w", n.rel, err)
			}
			continue
		}
		have[n.rel] = n.info
	}
	for _, f := range m.Files {
		if fi, ok := have[f.Path]; ok && (same(f, fi, m) || sameContent(root, f, fi)) {
			continue
		}
		if err := restoreFile(root, dir, f); err != nil {
			return fmt.Errorf("cannot roll back %s: %w", f.Path, err)
		}
	}
	return nil
}

// same: the live file is the one the snapshot took, untouched since.
func same(f File, fi fs.FileInfo, m *Manifest) bool {
	if f.Link != "" {
		return false // links are cheap to recreate, and a swapped target is not in any fingerprint
	}
	if !fi.Mode().IsRegular() {
		return false
	}
	return unchanged(f, File{Bytes: fi.Size(), Mode: fi.Mode().Perm(), Live: fingerprint(fi)}, m.Taken)
}

// sameContent: the live file holds the snapshot's bytes and mode, though its
// fingerprint is not the one the snapshot took.
func sameContent(root *os.Root, f File, fi fs.FileInfo) bool {
	if f.Link != "" || f.SHA256 == "" || !fi.Mode().IsRegular() || fi.Size() != f.Bytes || fi.Mode().Perm() != f.Mode.Perm() {
		return false
	}
	sum, _, err := hashIn(root, f.Path)
	return err == nil && sum == f.SHA256
}

func restoreFile(root *os.Root, dir string, f File) error {
	if d := parentOf(f.Path); d != "" {
		if fi, err := root.Lstat(d); err == nil && !fi.IsDir() {
			if err := root.Remove(d); err != nil {
				return err
			}
		}
	}
	if f.Link != "" {
		if err := removeIn(root, f.Path); err != nil {
			return err
		}
		if d := parentOf(f.Path); d != "" {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		return root.Symlink(f.Link, f.Path)
	}
	return copyInto(root, f.Path, filepath.Join(dir, filepath.FromSlash(f.Path)), f.Mode)
}

func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}
