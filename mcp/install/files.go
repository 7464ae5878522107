package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// readFile reads a file that may not exist (through a symlink: a dangling
// one is a file that does not exist yet).
func readFile(path string) ([]byte, bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := os.ReadFile(path)
	return data, err == nil, err
}

// maxLinks bounds a chain of symlinks, as the kernel does (ELOOP).
const maxLinks = 40

// resolveLink follows path while it is a symlink and returns the file it
// ends at, which may not exist yet. People keep their configs in a dotfiles
// repository and link them into place: install must write that file and keep
// the link, not replace the link with a copy.
func resolveLink(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// tempSuffix ends the name of every temporary file install writes,
// .<name>.<pid>.<random>.massgen-tmp beside the file it becomes, so a later
// run can tell its own leftovers from anyone else's.
const tempSuffix = ".massgen-tmp"

// writeFile replaces a file atomically, keeping its mode (0600 for a new
// one: client configs can hold the user's other secrets) and, run as root,
// its owner (a new one's is its directory's). Through a symlink
// it replaces the file the link points to, in that file's directory, and the
// link stays.
func writeFile(path string, data []byte) error {
	real, err := resolveLink(path)
	if err != nil {
		return err
	}
	mode, like := fs.FileMode(0o600), filepath.Dir(real)
	if fi, err := os.Stat(real); err == nil {
		mode, like = fi.Mode().Perm(), real
	}
	tmp, err := wholefile.Temp(filepath.Dir(real), "."+filepath.Base(real)+"."+strconv.Itoa(os.Getpid())+".*"+tempSuffix, data, mode)
	if err != nil {
		return err
	}
	if err := chownLike(tmp, like); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, real); err != nil {
		os.Remove(tmp)
		return err
	}
	return wholefile.SyncDir(filepath.Dir(real))
}

// sweepTemps removes the temporary files an earlier run left beside path
// when it was killed between writing and renaming: only files named as
// writeFile names them for this file, and only those whose process is gone
// (a run still writing keeps its own).
func sweepTemps(path string) error {
	real, err := resolveLink(path)
	if err != nil {
		return err
	}
	dir, prefix := filepath.Dir(real), "."+filepath.Base(real)+"."
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, tempSuffix) {
			continue
		}
		pid, _, ok := strings.Cut(strings.TrimPrefix(name, prefix), ".")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 || running(n) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing a temporary file a killed install left: %w", err)
		}
	}
	return nil
}

// running tells whether a process with this id exists (one we may not
// signal still exists).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
