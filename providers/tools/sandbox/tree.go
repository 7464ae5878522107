package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/internal/specialfile"
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
// only ever bound read-only (the mount refuses writes and chmod alike).
// Entries skip says to leave out are left out (given their path inside
// src, slash-separated; skip may be nil). FIFOs, sockets and devices are
// left out too, having no file to read (a FIFO's reader would wait for a
// writer), and returned in left, slash-separated paths inside the tree
// (the first specialfile.Kept and how many in all, so a directory of a
// million FIFOs grows nothing), for the caller to tell whoever reads the
// tree: a snapshot holds none, so one is a hand's or a damaged snapshot's. Any other entry it cannot
// rebuild (unreadable, a full disk) fails the copy, naming the entry by
// its path inside the tree: a tree with files missing would pass for the
// peer's whole answer. Errors name no path of src's (a snapshot's names
// its agent); what is left at dst is the caller's to remove.
func CopyTree(src, dst string, link bool, skip func(rel string, d fs.DirEntry) bool) (left specialfile.Names, err error) {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return left, err
	}
	if real, err := filepath.EvalSymlinks(src); err == nil {
		src = real // a walk does not enter a root that is a symlink
	}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if path == src {
			if err != nil {
				return fmt.Errorf("the tree to show cannot be read: %w", bare(err))
			}
			return nil
		}
		rel, rerr := filepath.Rel(src, path)
		if rerr != nil {
			return rerr
		}
		if err != nil {
			return notCopied(rel, err)
		}
		if skip != nil && skip(filepath.ToSlash(rel), d) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		t := d.Type()
		if specialfile.Is(t) {
			left.Add(filepath.ToSlash(rel))
			return nil
		}
		if err := copyEntry(path, filepath.Join(dst, rel), t, link); err != nil {
			return notCopied(rel, err)
		}
		return nil
	})
	return left, err
}

// copyEntry makes the entry at to again from the one at path, of type t.
func copyEntry(path, to string, t fs.FileMode, link bool) error {
	switch {
	case t.IsDir():
		return os.Mkdir(to, 0o700)
	case t&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return err
		}
		return os.Symlink(target, to)
	case t.IsRegular():
		if link && os.Link(path, to) == nil {
			return nil
		}
		return copyReadOnly(path, to)
	}
	return nil // CopyTree leaves the rest out, and says so
}

// NotShown says, for whoever reads a tree CopyTree built, which entries
// it left out (left, as CopyTree returned it) of the tree they name dir:
// "" for none. A long list ends with how many more.
func NotShown(dir string, left specialfile.Names) string {
	return left.Say(dir, "not shown")
}

// notCopied says which entry of a tree could not be rebuilt, and why.
func notCopied(rel string, err error) error {
	return fmt.Errorf("%s could not be copied: %w", filepath.ToSlash(rel), bare(err))
}

// bare is err without the paths an *fs.PathError or *os.LinkError carries
// (src's names the peer's agent id).
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
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
