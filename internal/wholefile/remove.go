package wholefile

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// RemoveAllIn removes name inside root, a directory with all it holds, as
// root.RemoveAll does, and also when a directory in it has lost its owner's
// write or search bit: an agent's chmod -R a-w, a Go module cache, an
// unpacked tarball of 0555 directories. Unlinking needs write and search on
// the directory holding the entry, which only root gets without asking, so
// a server running as another user could never remove such a tree (a
// session's delete, a rollback). When the plain removal is refused, the
// tree's directories get their owner's bits back (makeRemovable) and the
// removal runs again. Everything stays inside root, and no symlink is
// followed to find a directory.
func RemoveAllIn(root *os.Root, name string) error {
	err := root.RemoveAll(name)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	if err := makeRemovable(root, name); err != nil {
		return err
	}
	return root.RemoveAll(name)
}

// RemoveAll is RemoveAllIn for a path: the tree is removed from within its
// parent directory, and nothing outside it is touched.
func RemoveAll(p string) error {
	root, err := os.OpenRoot(filepath.Dir(p))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer root.Close()
	return RemoveAllIn(root, filepath.Base(p))
}

// removableBits are the owner's bits a directory's entries need to be
// listed and unlinked.
const removableBits = 0o700

// makeRemovable gives every directory under name (name included) its
// owner's read, write and search bits. Directories are found by Lstat and
// by the entries' own types, so a symlink is never descended; root.Chmod
// resolves within root, so even a directory swapped for a symlink meanwhile
// changes only a directory inside root. Files keep their modes: unlinking
// one asks only its directory's. Only the names of subdirectories are held,
// a batch of entries at a time, however many files a directory has.
func makeRemovable(root *os.Root, name string) error {
	fi, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile, or by the first try
	}
	if err != nil || !fi.IsDir() {
		return err
	}
	if fi.Mode().Perm()&removableBits != removableBits {
		if err := root.Chmod(name, fi.Mode()|removableBits); err != nil {
			return err
		}
	}
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	var dirs []string
	err = ReadDirBatches(f, func(ents []fs.DirEntry) error {
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, path.Join(name, e.Name()))
			}
		}
		return nil
	})
	f.Close()
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := makeRemovable(root, d); err != nil {
			return err
		}
	}
	return nil
}
