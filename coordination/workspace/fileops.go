package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// hashIn reads a regular file inside root (never a FIFO or a device:
// openRegular) and returns its SHA-256.
func hashIn(root *os.Root, rel string) (string, int64, error) {
	f, err := openRegular(root, rel)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// errNotRegular refuses a path a walk found as a regular file that is no
// longer one when it is opened.
var errNotRegular = errors.New("not a regular file (a FIFO, socket or device took the file's place after the workspace was listed); remove it from the workspace")

// openRegular opens rel inside root for reading, if it is a regular file.
// A walk leaves out FIFOs and devices, but a process still running in the
// workspace can swap one in for a file it listed: the open does not block
// (a FIFO's would wait forever for a writer, and the step with it) and the
// type is checked on what was opened, not on the name.
func openRegular(root *os.Root, rel string) (*os.File, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: rel, Err: errNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// copyInto writes src (a snapshot or context file) as rel inside root,
// replacing whatever is there, with perm (write bits restored: the copy is
// the agent's or the user's to change).
func copyInto(root *os.Root, rel, src string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if dir := filepath.Dir(filepath.FromSlash(rel)); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := removeIn(root, rel); err != nil {
		return err
	}
	out, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm.Perm()|0o200)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && perm.Perm()|0o200 != perm.Perm() {
		err = root.Chmod(rel, perm.Perm()) // a read-only file stays read-only
	}
	return err
}

// removeIn removes rel (a file, a link, or a directory with its content)
// if it exists. A directory goes through wholefile.RemoveAllIn: one an
// agent left read-only (its files with it) would otherwise refuse a server
// not run as root, and a rollback would leave the step's files in place.
func removeIn(root *os.Root, rel string) error {
	fi, err := root.Lstat(rel)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if fi.IsDir() {
		return wholefile.RemoveAllIn(root, rel)
	}
	return root.Remove(rel)
}
