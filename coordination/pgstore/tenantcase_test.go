//go:build unix

package pgstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// A replica's work directory is laid out like the file store's state
// directory, so on a case-insensitive filesystem tenants/Acme is
// tenants/acme: tenant Acme's workspaces would be written in acme's
// directory, and the sweep, asking the database for acme's sessions, would
// remove Acme's live workspaces. The replica refuses the second spelling as
// the file store does. A symlink tenants/Acme -> acme stands in for such a
// filesystem. The rows themselves never merge (every key holds the tenant
// as spelled), so without a work directory both spellings open, each
// seeing only its own sessions.
func TestAReplicaRefusesATenantWhoseWorkDirectoryIsAnotherSpellings(t *testing.T) {
	dsn := pgtest.Schema(t)
	work := t.TempDir()
	db, err := Open(context.Background(), dsn, Options{WorkDir: work, noSweep: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := os.MkdirAll(filepath.Join(work, "tenants", "acme", "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("acme", filepath.Join(work, "tenants", "Acme")); err != nil {
		t.Fatal(err)
	}
	st, err := db.For("Acme")
	if !errors.Is(err, coordination.ErrBadInput) || st != nil {
		t.Fatalf("tenant Acme opened over tenant acme's work directory: %v", err)
	}
	for _, want := range []string{`"Acme"`, `"acme"`, "letter case"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %s: %v", want, err)
		}
	}

	rows, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rows.Close)
	lower, err := rows.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := lower.Create(context.Background(), storetest.NewSession("s1")); err != nil {
		t.Fatal(err)
	}
	upper, err := rows.For("Acme")
	if err != nil {
		t.Fatalf("tenant Acme refused on rows alone: %v", err)
	}
	if ids, err := upper.Sessions(context.Background()); err != nil || len(ids) != 0 {
		t.Errorf("tenant Acme sees %v, %v; want none of acme's sessions", ids, err)
	}
}

// TestASweepKeepsTheWorkspacesOfATenantSpelledOtherwiseOpenedFirst: two
// spellings of a tenant opened on a replica before either had a work
// directory both pass For's check, and on a case-insensitive filesystem
// their workspaces then share one directory (a symlink tenants/Acme ->
// acme stands in for one). The sweep lists that directory once, under
// the name it has on disk, and must not take the other spelling's live
// session for a deleted one of acme's.
func TestASweepKeepsTheWorkspacesOfATenantSpelledOtherwiseOpenedFirst(t *testing.T) {
	dsn := pgtest.Schema(t)
	db := sweeper(t, dsn, Options{}).db
	ctx := context.Background()
	lower, err := db.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	upper, err := db.For("Acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := lower.Create(ctx, storetest.NewSession("s1")); err != nil {
		t.Fatal(err)
	}
	if err := upper.Create(ctx, storetest.NewSession("s2")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(db.workDir, "tenants", "acme", "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("acme", filepath.Join(db.workDir, "tenants", "Acme")); err != nil {
		t.Fatal(err)
	}
	own := holdCopy(t, lower.(*Store), "s1")
	other := holdCopy(t, upper.(*Store), "s2")
	if _, err := db.SweepWorkDir(ctx); err != nil {
		t.Fatal(err)
	}
	if gone(own) {
		t.Errorf("the sweep removed acme's live session s1's workspace")
	}
	if gone(other) {
		t.Errorf("the sweep removed tenant Acme's live session s2's workspace, in acme's directory, as a deleted session of acme's")
	}
}
