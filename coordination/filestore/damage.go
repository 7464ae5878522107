package filestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// damagedError is a stored file that does not read as what it should be. It
// names the file, so whoever reads the message knows what to restore.
type damagedError struct {
	path  string
	cause error
}

func damaged(path string, cause error) error { return &damagedError{path: path, cause: cause} }

func (e *damagedError) Error() string {
	return fmt.Sprintf("%s is damaged (%v)", e.path, e.cause)
}

func (e *damagedError) Unwrap() error { return coordination.ErrDamaged }

// withFsck adds what to do next to a damage report: the session stops rather
// than lose the entry, and fsck tells what can be repaired.
func withFsck(err error, id string) error {
	var d *damagedError
	if !errors.As(err, &d) {
		return err
	}
	return fmt.Errorf("%w; the session stops here rather than lose the entry: restore the file from a backup, or run `massgen-mcp fsck %s` to see what can be repaired (`fsck --repair` moves damaged files aside, deleting nothing)", err, id)
}

// ours tells whether a session directory was written by massgen-mcp (it has
// session.json), whose files are all renamed into place whole: a torn one is
// damage, never a write in progress.
func ours(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, "session.json"))
	return err == nil
}
