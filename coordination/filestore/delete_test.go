package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestACrashMidDeleteLeavesNoHalfSession: a delete killed after it moved
// the session aside and removed part of it leaves a trash directory that
// neither the listing, fsck's checks, nor a create's leftovers take for a
// session; the next prune's collection removes it.
func TestACrashMidDeleteLeavesNoHalfSession(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	st := filestore.New(state)
	for _, id := range []string{"gone", "kept"} {
		if err := st.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	// What DeleteSession's rename leaves if the process dies during the
	// removal that follows: the session's files half gone, under the trash
	// name.
	trash := filepath.Join(state, "sessions", ".gone.pruned-0a1b2c")
	if err := os.Rename(filepath.Join(state, "sessions", "gone"), trash); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(trash, "session.json")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(trash, old, old) // past a create leftover's minute

	ids, err := st.Sessions(ctx)
	if err != nil || !slices.Equal(ids, []string{"kept"}) {
		t.Fatalf("Sessions with a crashed delete's trash = %v (%v), want [kept]", ids, err)
	}
	if ps, err := st.Check(ctx, "kept"); err != nil || len(ps) != 0 {
		t.Fatalf("fsck of the kept session: %v %v", ps, err)
	}
	if left := st.CreateLeftovers(""); len(left) != 0 {
		t.Fatalf("a delete's trash is listed as a create's leftover: %v", left)
	}
	if _, err := st.Session(ctx, "gone"); err == nil {
		t.Fatal("the deleted session still reads")
	}

	c, err := st.CollectGarbage(ctx, 0)
	if err != nil || c.Leftovers != 1 || c.Bytes <= 0 {
		t.Fatalf("CollectGarbage = %+v, %v; want the one leftover and its bytes", c, err)
	}
	if _, err := os.Stat(trash); !os.IsNotExist(err) {
		t.Fatalf("the trash is still there: %v", err)
	}
	if _, err := st.Session(ctx, "kept"); err != nil {
		t.Fatalf("collecting the trash touched the kept session: %v", err)
	}
}

// TestDeleteFreesTheSessionsSpace: a session's size counts each file once
// and its delete leaves nothing in the sessions directory.
func TestDeleteFreesTheSessionsSpace(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	st := filestore.New(state)
	if err := st.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	dir := st.Dir("s")
	big := make([]byte, 1<<20)
	if err := os.WriteFile(filepath.Join(dir, "big"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "big"), filepath.Join(dir, "big-link")); err != nil {
		t.Fatal(err)
	}
	n, err := st.SessionBytes(ctx, "s")
	if err != nil || n < 1<<20 || n >= 2<<20 {
		t.Fatalf("SessionBytes = %d, %v; want the megabyte once", n, err)
	}
	if err := st.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(filepath.Join(state, "sessions"))
	if err != nil || len(des) != 0 {
		t.Fatalf("the sessions directory after the delete holds %v (%v)", des, err)
	}
	var _ coordination.SessionDeleter = st
}
