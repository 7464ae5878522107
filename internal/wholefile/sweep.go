package wholefile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Sweep removes the temps that a crash between a write and its rename left
// in dir: the regular files whose names temp picks (TempsOf's, for files
// written here), last changed before cutoff, since a younger one may be
// another writer's, at work now. It reads dir once however many files'
// temps it looks for. Nothing else reads them, so a sweep that fails
// leaves them for the next; it returns the paths it removed.
func Sweep(dir string, cutoff time.Time, temp func(name string) bool) []string {
	return SweepFunc(dir, func(de fs.DirEntry) bool {
		if !temp(de.Name()) || !de.Type().IsRegular() {
			return false
		}
		info, err := de.Info()
		return err == nil && info.ModTime().Before(cutoff)
	})
}

// SweepFunc is Sweep with the caller's own rule for what is a leftover:
// it removes each entry of dir that leftover picks, a directory with all
// it holds (RemoveAllIn: read-only directories in it too), and returns
// the paths it removed. It is for a store whose
// temps are also directories, or whose rule is not their age alone (the
// file store's Tidy: temps written under a lock it holds go at any age).
func SweepFunc(dir string, leftover func(fs.DirEntry) bool) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var root *os.Root
	var gone []string
	for _, de := range des {
		if !leftover(de) {
			continue
		}
		if root == nil {
			if root, err = os.OpenRoot(dir); err != nil {
				return gone
			}
			defer root.Close()
		}
		remove := root.Remove
		if de.IsDir() {
			remove = func(name string) error { return RemoveAllIn(root, name) }
		}
		if remove(de.Name()) == nil {
			gone = append(gone, filepath.Join(dir, de.Name()))
		}
	}
	return gone
}

// TempsOf picks the names of the temps Replace and Create write for the
// files named names in one directory (TempPattern's), for Sweep.
func TempsOf(names ...string) func(name string) bool {
	prefixes := make([]string, len(names))
	for i, n := range names {
		prefixes[i] = strings.TrimSuffix(TempPattern(n), "*")
	}
	return func(name string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
}
