package wholefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// renameLinked is RenameNoReplace for a filesystem that cannot refuse to
// replace in the rename itself. A regular file is hard-linked to its new
// name, which never replaces either, and its old name removed: the refusal
// stays atomic wherever there are hard links (NFS, every Unix). A
// directory, which cannot be linked, or a file on a filesystem without
// hard links goes through renameChecked. Only regular files are linked
// because link(2) follows a symlink on some systems, which would rename
// its target instead.
func renameLinked(oldpath, newpath string) error {
	if fi, err := os.Lstat(oldpath); err == nil && fi.Mode().IsRegular() {
		err := os.Link(oldpath, newpath)
		if err == nil {
			// newpath holds the file now. An old name that will not go is
			// a second name of it; a temp's is swept like a crash's.
			os.Remove(oldpath)
			return nil
		}
		if errors.Is(err, fs.ErrExist) {
			return renameError(oldpath, newpath, fs.ErrExist)
		}
	}
	return renameChecked(oldpath, newpath)
}

// renameChecked is rename without replacing for a filesystem that can do
// it neither in the rename nor by a link: it looks first, which leaves a
// window in which a writer racing for newpath is replaced.
func renameChecked(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return renameError(oldpath, newpath, fs.ErrExist)
	}
	if err := os.Rename(oldpath, newpath); err != nil {
		// os.Rename's error names the paths already; unwrapped, every
		// way through RenameNoReplace fails in the same words.
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return renameError(oldpath, newpath, err)
	}
	return nil
}

// renameError is every failure of RenameNoReplace: a sentence naming both
// paths, wrapping the cause (a syscall.Errno or fs.ErrExist), so
// errors.Is(err, fs.ErrExist) and errors.Is(err, syscall.ENOSPC) see it.
func renameError(oldpath, newpath string, err error) error {
	return fmt.Errorf("cannot rename %s to %s: %w", oldpath, newpath, err)
}
