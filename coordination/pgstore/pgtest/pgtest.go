// Package pgtest gives each test its own PostgreSQL schema, for the tests of
// coordination/pgstore and of what runs on it (two serve replicas). The
// database is MASSGEN_TEST_POSTGRES, by default the local server's test
// database. Without a reachable server a test is skipped with a line naming
// what to install; under CI=true it fails instead, CI having promised one.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultDSN is the database tests use when MASSGEN_TEST_POSTGRES is unset:
// the machine's own PostgreSQL, trust authentication.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Base is the database tests create their schemas in.
func Base() string {
	if d := os.Getenv("MASSGEN_TEST_POSTGRES"); d != "" {
		return d
	}
	return DefaultDSN
}

// Schema creates a fresh schema for the test, dropped when it ends, and
// returns a DSN whose connections use it (search_path).
func Schema(t testing.TB) string {
	t.Helper()
	base := Base()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		const how = "PostgreSQL is not reachable at %s (%v): install it (apt-get install postgresql; pg_ctlcluster --skip-systemctl-redirect 15 main start) or point MASSGEN_TEST_POSTGRES at one"
		if os.Getenv("CI") == "true" {
			t.Fatalf(how+"; CI=true requires it", Base(), err)
		}
		t.Skipf("SKIPPED: "+how, Base(), err)
	}
	defer conn.Close(context.Background())
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "massgen_test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating the test schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("dropping the test schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("dropping the test schema %s: %v", schema, err)
		}
	})
	return WithSchema(base, schema)
}

// WithSchema is dsn with its connections' search_path set to schema.
func WithSchema(dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn + " search_path=" + schema
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
