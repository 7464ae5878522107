package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A peer's snapshot lives at agents/<agent id>/NNN/workspace, and its agent
// id, often its model's name, is what no prompt and no tool output may
// carry. Bound directly at PeerDir, /proc/self/mountinfo (findmnt, a mount
// table) shows a bind's source path inside the sandbox, as readlink shows a
// symlink's target. So a peer's files are shown from a tree rebuilt under
// a path of its alias only (CopyTree): the CLI agents' per run
// (providers/cliagent/peers.go), run_command's per command
// (providers/tools/command.go).

// CopyTree rebuilds the tree at src at dst, which must not exist:
// directories made anew (mode 0700), regular files hard-linked when link
// says so (copied where a link fails: another file system), else cloned or
// copied without their write bits, symlinks made again with their
// targets. Hard links are the snapshot's own files, so they are for a tree
// only ever bound read-only (the mount refuses writes and chmod alike). An
// entry that cannot be read is left out, as it could not have been read at
// src either, and so is one skip says to leave out (given its path inside
// src, slash-separated; skip may be nil); errors name dst's paths only.
func CopyTree(src, dst string, link bool, skip func(rel string, d fs.DirEntry) bool) error {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(src); err == nil {
		src = real // a walk does not enter a root that is a symlink
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if path == src {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // src's path names what dst's must not
			}
			if err != nil {
				return fmt.Errorf("the tree to show cannot be read: %w", err)
			}
			return nil
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return nil
		}
		if skip != nil && skip(filepath.ToSlash(rel), d) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(to, 0o700)
		case t&fs.ModeSymlink != 0:
			if target, err := os.Readlink(path); err == nil {
				_ = os.Symlink(target, to)
			}
		case t.IsRegular():
			if !link || os.Link(path, to) != nil {
				_ = copyReadOnly(path, to)
			}
		}
		return nil
	})
}

// copyReadOnly copies the regular file src to the new file dst (a clone
// where the file system can make one), with src's mode less its write
// bits.
func copyReadOnly(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()&^0o222|0o400)
	if err != nil {
		return err
	}
	if clone(out, in) != nil {
		_, err = io.Copy(out, in)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}
