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

// markerName is the file every session massgen-mcp creates carries (empty,
// hidden, so MassGen's loader never sees it). It is how a session of ours
// whose session.json was lost is told from one MassGen wrote, which has
// none: without it, a lost setup would turn the session into a MassGen
// session of unknown models.
const markerName = ".massgen-mcp"

// ours tells whether a session directory was written by massgen-mcp, whose
// files are all renamed into place whole, so a torn one is damage, never a
// write in progress. Any one of session.json, the marker or session_log/
// (which MassGen never writes) says so; sessions created before the marker
// existed have session.json.
func ours(dir string) bool {
	for _, name := range []string{"session.json", markerName, "session_log"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}
