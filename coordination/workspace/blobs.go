package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
)

// Blobs stores the content of snapshot files. A snapshot is immutable once
// its step lands, so content may be shared between snapshots; it is never
// shared with a live workspace, whose files an agent may rewrite in place.
type Blobs interface {
	// Put writes src's content (read from its start) as the new file dst,
	// read-only with perm's other bits, and returns its size and SHA-256.
	Put(dst string, src *os.File, perm fs.FileMode) (n int64, sum string, err error)
	// Share makes dst, a new file, hold the content of prev, a file of an
	// earlier snapshot whose manifest gives its SHA-256 as sum. On an
	// error the snapshot puts the content anew (Put) instead.
	Share(prev, dst, sum string) error
}

// Keeper is implemented by Blobs whose content can go while a snapshot
// naming it is still on disk (a database's garbage collection of blobs no
// manifest names): Share refuses content no longer kept, so no new
// manifest names it. Before sharing, a snapshot asks about everything it
// is about to share at once, so Share need not ask file by file.
type Keeper interface {
	// Keep finds which of sums are kept and makes sure they stay until a
	// manifest naming them can land; Share then answers from it (after
	// a Keep that failed, Share asks for itself).
	Keep(sums []string) error
}

// DirBlobs keeps snapshot contents as plain files (MassGen reads them there):
// new content is reflinked where the file system can clone, else copied;
// shared content is a hard link, else a copy.
type DirBlobs struct{}

// Put implements Blobs.
func (DirBlobs) Put(dst string, src *os.File, perm fs.FileMode) (int64, string, error) {
	// Read as well as written: a clone is hashed from itself.
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, readOnly(perm))
	if err != nil {
		return 0, "", err
	}
	n, sum, err := fill(out, src)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return n, sum, err
}

// fill gives out src's content: a clone, then read once for its hash, or
// a copy hashed on the way. Either is of src as it was, though a process
// the agent left running may still be writing it: the clone is fixed when
// made, and is what is hashed (src may have changed since), and the copy
// stops at the size src had when it began, so a file that keeps growing
// neither runs the copy on past the snapshot's caps nor never ends.
func fill(out, src *os.File) (int64, string, error) {
	if clone(out, src) == nil {
		if _, err := out.Seek(0, io.SeekStart); err != nil {
			return 0, "", err
		}
		return copyHashed(io.Discard, out, -1)
	}
	fi, err := src.Stat()
	if err != nil {
		return 0, "", err
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return 0, "", err
	}
	return copyHashed(out, src, fi.Size())
}

// copyHashed copies src to out, at most limit bytes (-1: to the end), and
// hashes what it copied.
func copyHashed(out io.Writer, src io.Reader, limit int64) (int64, string, error) {
	if limit >= 0 {
		src = io.LimitReader(src, limit)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), src)
	return n, hex.EncodeToString(h.Sum(nil)), err
}

// Share implements Blobs.
func (DirBlobs) Share(prev, dst, _ string) error {
	err := os.Link(prev, dst)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// Another file system, a link limit, or links not allowed: copy.
	in, err := os.Open(prev)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	_, _, err = DirBlobs{}.Put(dst, in, fi.Mode().Perm())
	return err
}

// readOnly drops the write bits (a snapshot never changes) and group's and
// others' bits (the state tree is the owner's alone: modes.go), and keeps
// the owner's read bit, so the server can read back a file its agent had
// made unreadable (unreadable.go); the manifest keeps the file's own mode,
// which a restore and an apply give the file.
func readOnly(perm fs.FileMode) fs.FileMode { return perm.Perm()&0o500 | 0o400 }
