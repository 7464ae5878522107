package filestore_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
)

// openOnCleanup gives every directory under dir its write bit back when
// the test ends, so a failing test's tree can still be removed.
func openOnCleanup(t *testing.T, dir string) {
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
}

// readOnlyVendor leaves in agent_a's live workspace of session id what
// chmod -R a-w, a Go module cache or a tarball of 0555 directories leaves:
// a read-only directory holding a read-only file.
func readOnlyVendor(t *testing.T, state, id string) string {
	t.Helper()
	ro := filepath.Join(state, "sessions", id, "agents", "agent_a", "workspace", "vendor")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "x.go"), []byte("package x"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	return ro
}

// TestAReadOnlyDirectoryInAWorkspaceIsRemovedByAPrune: a session whose
// workspace holds a read-only directory is deleted whole, and the trash a
// crashed delete left beside it is collected, by a server that is not
// root (root ignores the modes, so as root the test drops its overrides).
func TestAReadOnlyDirectoryInAWorkspaceIsRemovedByAPrune(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	openOnCleanup(t, state)
	st := filestore.New(state)
	for _, id := range []string{"aaa", "zzz"} {
		if err := st.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	readOnlyVendor(t, state, "aaa")
	readOnlyVendor(t, state, "zzz")
	// zzz: a crashed delete's trash, read-only directory and all.
	trash := filepath.Join(state, "sessions", ".zzz.pruned-0a1b2c")
	if err := os.Rename(filepath.Join(state, "sessions", "zzz"), trash); err != nil {
		t.Fatal(err)
	}
	var derr, gerr error
	unprivileged.Do(t, func() {
		derr = st.DeleteSession(ctx, "aaa")
		_, gerr = st.CollectGarbage(ctx, 0)
	})
	if derr != nil || gerr != nil {
		t.Fatalf("DeleteSession: %v; CollectGarbage: %v", derr, gerr)
	}
	left, _ := os.ReadDir(filepath.Join(state, "sessions"))
	for _, de := range left {
		t.Errorf("left in the sessions directory: %s", de.Name())
	}
}

// TestATrashDirectoryThatCannotBeRemovedDoesNotStopTheOthers: the
// collection reports the one it cannot remove (here a read-only directory
// another user owns, whose mode the server may not change) and removes
// every other trash directory, those listed after it included.
func TestATrashDirectoryThatCannotBeRemovedDoesNotStopTheOthers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a directory another user's needs root")
	}
	ctx := context.Background()
	state := t.TempDir()
	openOnCleanup(t, state)
	st := filestore.New(state)
	for _, id := range []string{"aaa", "zzz"} {
		if err := st.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	ro := readOnlyVendor(t, state, "aaa")
	if err := os.Chown(ro, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	stuck := filepath.Join(state, "sessions", ".aaa.pruned-0a1b2c")
	trash := filepath.Join(state, "sessions", ".zzz.pruned-0a1b2c")
	for id, p := range map[string]string{"aaa": stuck, "zzz": trash} {
		if err := os.Rename(filepath.Join(state, "sessions", id), p); err != nil {
			t.Fatal(err)
		}
	}
	var c coordination.Collected
	var err error
	unprivileged.Do(t, func() { c, err = st.CollectGarbage(ctx, 0) })
	if err == nil {
		t.Fatal("CollectGarbage reported nothing of the trash it could not remove")
	}
	if _, serr := os.Stat(trash); !os.IsNotExist(serr) || c.Leftovers != 1 {
		t.Fatalf("CollectGarbage = %+v, %v; the trash after the stuck one is still there: %v", c, err, serr == nil)
	}
}
