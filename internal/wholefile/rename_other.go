//go:build !linux

package wholefile

// RenameNoReplace renames oldpath, a file or a directory, to newpath
// unless something is at newpath: then it fails with an error matching
// fs.ErrExist and what is there stands. os.Rename would silently replace a
// file or an empty directory. Off Linux there is no renameat2(2): a file
// is linked into place, which refuses atomically, and a directory, or a
// file where there are no hard links, is renamed after a check: a writer
// racing for newpath in that window is replaced unless the callers
// serialise (the file store's locks do).
func RenameNoReplace(oldpath, newpath string) error { return renameLinked(oldpath, newpath) }
