// Package wholefile writes a file whole or not at all: the data goes to a
// hidden temp file beside its target, is synced, and is renamed into place,
// and the directory is synced. A reader sees the old file or the new one,
// never a mix, and after a crash the new one is whole or absent.
// It is a leaf: every package that keeps a file which must survive a crash
// (the file store, the spend spool, approvals, login links, install's
// configs) writes it here, so the steps and their order live in one place.
package wholefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Temp writes data to a new file in dir named by pattern (os.CreateTemp's:
// the last "*" becomes a random string), with mode perm, synced and closed,
// and returns its path. On failure nothing is left behind.
func Temp(dir, pattern string, data []byte, perm fs.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// TempPattern is the temp name Replace and Create use for path's file:
// ".<name>.tmp-<random>", hidden, and no reader's name for a file of its own.
func TempPattern(path string) string { return "." + filepath.Base(path) + ".tmp-*" }

// Replace makes path hold data, with mode perm, replacing what was there.
// A failure before the rename leaves nothing behind and the old file as it
// was; a failure of the directory's sync after it leaves the new file in
// place, readable but perhaps not kept through a crash.
func Replace(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := Temp(dir, TempPattern(path), data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// Create makes path hold data, with mode perm, unless something is there
// already: then it fails with an error that matches fs.ErrExist and the
// file there stands. The temp is renamed into place by RenameNoReplace,
// which never replaces, so of two writers racing for one name exactly one
// wins; it needs no hard links (see RenameNoReplace for the one kind of
// filesystem where a race is left open). Failures leave what Replace's do.
func Create(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := Temp(dir, TempPattern(path), data, perm)
	if err != nil {
		return err
	}
	if err := RenameNoReplace(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes a rename or a new entry in dir durable. A filesystem that
// cannot sync a directory (EINVAL, ENOTSUP: some network and FUSE ones)
// keeps what it keeps; that is not an error of the write.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil
	}
	return err
}
