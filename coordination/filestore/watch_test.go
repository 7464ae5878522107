package filestore_test

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestWatchSeesAnotherWritersChanges pins what the watch is for: a store
// opened on the same directory elsewhere (another process) writes, and this
// store's watcher hears of it.
func TestWatchSeesAnotherWritersChanges(t *testing.T) {
	dir := t.TempDir()
	mine, theirs := filestore.New(dir), filestore.New(dir)
	ctx := context.Background()
	s := storetest.NewSession("shared")
	if err := theirs.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := mine.Watch(wctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := theirs.AppendSession(ctx, "shared", coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "cancelled by request"}); err != nil {
		t.Fatal(err)
	}
	storetest.AwaitChange(t, ch, coordination.Change{Session: true})
	l, err := theirs.LockStep(ctx, "shared", s.Agents[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "42"}); err != nil {
		t.Fatal(err)
	}
	l.Release()
	storetest.AwaitChange(t, ch, coordination.Change{Steps: true})
}
