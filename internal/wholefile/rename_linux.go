package wholefile

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// RenameNoReplace renames oldpath, a file or a directory, to newpath
// unless something is at newpath: then it fails with an error matching
// fs.ErrExist and what is there stands. os.Rename would silently replace a
// file or an empty directory. On Linux renameat2(2)'s RENAME_NOREPLACE
// refuses in the rename itself; a filesystem without it (EINVAL: NFS, some
// FUSE ones; ENOSYS: kernels before 3.15) gets a file linked into place,
// which refuses as atomically, and a directory, or a file where there are
// no hard links either, renamed after a check: a writer racing for newpath
// in that window is replaced unless the callers serialise (the file
// store's locks do).
func RenameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	switch err {
	case nil:
		return nil
	case unix.EINVAL, unix.ENOSYS:
		return renameLinked(oldpath, newpath)
	case unix.EEXIST, unix.ENOTEMPTY:
		return renameError(oldpath, newpath, fs.ErrExist)
	}
	return renameError(oldpath, newpath, err)
}
