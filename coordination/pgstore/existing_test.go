package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAnExistingOpenChangesNoSchema: Options.Existing (status, approve)
// refuses a database no server has prepared and one at another version,
// and creates or migrates nothing; a schema a server prepared opens.
func TestAnExistingOpenChangesNoSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	tables := func() int {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := pgstore.Open(ctx, dsn, pgstore.Options{Existing: true}); err == nil || !strings.Contains(err.Error(), "no massgen-mcp schema") {
		t.Fatalf("an existing open of an empty schema = %v; want it refused", err)
	}
	if n := tables(); n != 0 {
		t.Fatalf("the refused open left %d tables", n)
	}
	db, err := pgstore.Open(ctx, dsn, pgstore.Options{}) // a server prepares it
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = pgstore.Open(ctx, dsn, pgstore.Options{Existing: true})
	if err != nil {
		t.Fatalf("an existing open of a prepared schema: %v", err)
	}
	db.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	var older int
	if err := conn.QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&older); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.Open(ctx, dsn, pgstore.Options{Existing: true}); err == nil || !strings.Contains(err.Error(), "changes no schema") {
		t.Fatalf("an existing open of an older schema = %v; want it refused", err)
	}
	var have int
	if err := conn.QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&have); err != nil || have != older {
		t.Fatalf("the older schema is now at version %d (%v); want it left at %d", have, err, older)
	}
}
