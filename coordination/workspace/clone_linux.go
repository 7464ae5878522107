package workspace

import (
	"os"

	"golang.org/x/sys/unix"
)

// clone makes out share src's blocks (FICLONE: btrfs, XFS, bcachefs, …);
// an error means the file system cannot, and the caller copies.
func clone(out, src *os.File) error {
	return unix.IoctlFileClone(int(out.Fd()), int(src.Fd()))
}
