package filestore_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// commonUmask sets the umask most users have (022) for the test, so a
// mode the store asks for is the mode it gets and a 0644 is caught.
func commonUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

// assertPrivate walks root and fails for every entry group or others may
// read, write or enter. Symlinks are skipped: their mode means nothing.
func assertPrivate(t *testing.T, root string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		n++
		if fi.Mode().Perm()&0o077 != 0 {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s has mode %#o; the state tree must be the owner's alone", rel, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("walked only %d entries of %s; the test checks nothing", n, root)
	}
}

// TestTheStateTreeIsPrivate: session.json holds the team's specs (a base
// URL may carry a proxy's credentials) and the timeline holds the task, so
// nothing the store writes — directories, atomic writes, locks, logs,
// spend files, leases, projections, images — is open to group or others.
// The whole store suite runs on a fresh .massgen and leaves its tree to
// be walked.
func TestTheStateTreeIsPrivate(t *testing.T) {
	commonUmask(t)
	storetest.Run(t, func(t *testing.T) coordination.Store {
		state := filepath.Join(t.TempDir(), ".massgen")
		t.Cleanup(func() {
			if _, err := os.Stat(state); err == nil {
				assertPrivate(t, state)
			}
		})
		return filestore.New(state)
	})
}

// TestAStepsRecordsArePrivate covers what the suite does not write: a
// step's tool log, an image, the permission audit.
func TestAStepsRecordsArePrivate(t *testing.T) {
	commonUmask(t)
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), ".massgen")
	st := filestore.New(state)
	if err := st.Create(ctx, storetest.NewSession("s1")); err != nil {
		t.Fatal(err)
	}
	l, err := st.LockStep(ctx, "s1", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	e, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "391"})
	l.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteToolLog(ctx, "s1", "agent_a", e.Step, []providers.ToolRecord{{Kind: "tool", Name: "read_file"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutImage(ctx, "s1", []byte("not really a png")); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendPermission(ctx, "s1", permissions.Record{Time: time.Now(), Agent: "agent_a", Tool: "run_command", Outcome: permissions.Approved}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendEvent(ctx, "s1", coordination.Event{Time: time.Now(), Type: "note", Message: "the task text"}); err != nil {
		t.Fatal(err)
	}
	assertPrivate(t, state)
}

// TestAnOldOpenStateDirectoryIsClosedAtOpen: a state directory an earlier
// version made 0755 has its root and sessions directory closed when a store
// opens it, which closes everything under them to group and others.
func TestAnOldOpenStateDirectoryIsClosedAtOpen(t *testing.T) {
	state := filepath.Join(t.TempDir(), ".massgen")
	sessions := filepath.Join(state, "sessions")
	if err := os.MkdirAll(filepath.Join(sessions, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{state, sessions} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	filestore.New(state)
	for _, d := range []string{state, sessions} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %#o after a store opened it, want 0700", d, fi.Mode().Perm())
		}
	}
}
