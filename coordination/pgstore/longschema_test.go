package pgstore

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestASchemaWithALongNameIsWrittenAndWatched: a schema whose change
// channel would pass PostgreSQL's 63-byte names (here 60 characters) is
// written to and watched. Before, LISTEN shortened the channel silently
// and pg_notify, in every write, refused it: every write failed.
func TestASchemaWithALongNameIsWrittenAndWatched(t *testing.T) {
	ctx := context.Background()
	schema := "massgen_long_" + strings.Repeat("x", 47)
	conn, err := pgx.Connect(ctx, pgtest.Base())
	if err != nil {
		t.Skipf("SKIPPED: no PostgreSQL at %s (%v)", pgtest.Base(), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE; CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }()
	open := func() coordination.Store {
		db, err := Open(ctx, pgtest.WithSchema(pgtest.Base(), schema), Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(db.Close)
		if len(db.channel) > 63 {
			t.Fatalf("channel %q is %d bytes, over PostgreSQL's 63", db.channel, len(db.channel))
		}
		st, err := db.For(coordination.DefaultTenant)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := open(), open()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatalf("Create: %v", err)
	}
	ch, err := b.Watch(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatalf("LockStep: %v", err)
	}
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "4"}); err != nil {
		t.Fatalf("Append on a schema of %d characters: %v", len(schema), err)
	}
	l.Release()
	storetest.AwaitChange(t, ch, coordination.Change{Steps: true})
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled}); err != nil {
		t.Fatalf("AppendSession: %v", err)
	}
}
