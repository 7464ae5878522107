//go:build unix

package pgstore

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAWorkDirectoryOnAFileSystemWithoutLocksIsUsedUnlockedWithAWarning: on
// a file system that keeps no locks (some network and FUSE mounts: flock
// answers ENOLCK, EOPNOTSUPP or ENOSYS) a replica still opens, as it did
// before there was a lock, and its log says that nothing keeps a second
// replica off the directory; any other failure to lock refuses the open,
// naming the directory. Not parallel: it replaces flock for the package.
func TestAWorkDirectoryOnAFileSystemWithoutLocksIsUsedUnlockedWithAWarning(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	t.Cleanup(func() { flock = unix.Flock })
	for _, errno := range []unix.Errno{unix.ENOLCK, unix.EOPNOTSUPP, unix.ENOSYS} {
		flock = func(int, int) error { return errno }
		work := filepath.Join(t.TempDir(), "state")
		var logged bytes.Buffer
		db, err := Open(ctx, dsn, Options{WorkDir: work, Logger: zerolog.New(&logged)})
		if err != nil {
			t.Fatalf("flock answering %v: Open = %v; want the directory used unlocked", errno, err)
		}
		// Unlocked means a second replica is not refused either: what the
		// warning is there to say.
		second, err := Open(ctx, dsn, Options{WorkDir: work, Logger: zerolog.Nop()})
		if err != nil {
			t.Errorf("flock answering %v: a second Open on the directory = %v; want it unlocked too", errno, err)
		} else {
			second.Close()
		}
		db.Close()
		if line := logged.String(); !strings.Contains(line, `"level":"warn"`) || !strings.Contains(line, "keeps no locks") || !strings.Contains(line, work) {
			t.Errorf("flock answering %v: the log has no warning naming %s:\n%s", errno, work, line)
		}
	}
	// Refused by the lock before it dials: an address nothing answers at.
	flock = func(int, int) error { return unix.EIO }
	work := filepath.Join(t.TempDir(), "state")
	_, err := Open(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", Options{WorkDir: work, Logger: zerolog.Nop()})
	if !errors.Is(err, unix.EIO) || !strings.Contains(err.Error(), "cannot lock the work directory "+work) {
		t.Fatalf("flock answering EIO: Open = %v; want it refused, naming the directory", err)
	}
}
