// Package pgtest gives each test its own PostgreSQL schema, and connections
// to it of the test's own, for the tests of coordination/pgstore and of
// what runs on it (two serve replicas). The database is
// MASSGEN_TEST_POSTGRES, by default the local server's test database.
// Without a reachable server a test is skipped with a line naming
// what to install; under CI=true it fails instead, CI having promised one.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Install is how to get and start the server the tests need, as the line a
// test skips with and the one make test prints say it. The cluster's
// version is the one installed, not one written here.
const Install = "apt-get install postgresql; pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"

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

// Shown is Base as a line may show it: without a password or parameters.
// A keyword DSN (host=… password=…) is not shown, since it may hold one.
func Shown() string {
	u, err := url.Parse(Base())
	if err != nil || u.Scheme == "" {
		return "the MASSGEN_TEST_POSTGRES database"
	}
	u.RawQuery = ""
	return u.Redacted()
}

// Reach connects to Base and closes the connection: nil when the tests
// will find their database, else why not.
func Reach(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, Base())
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// Unreachable is the line naming what to install and how to start it, for
// a database that Reach or a connection could not reach with err.
func Unreachable(err error) string {
	return fmt.Sprintf("PostgreSQL is not reachable at %s (%v): install and start it (%s) or point MASSGEN_TEST_POSTGRES at one", Shown(), err, Install)
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
		if os.Getenv("CI") == "true" {
			t.Fatal(Unreachable(err) + "; CI=true requires it")
		}
		t.Skip("SKIPPED: " + Unreachable(err))
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

// Conn is a connection to dsn of the test's own, apart from any store's
// pool (to hold a lock or write a row behind a store's back), closed when
// the test ends; a test whose goroutines use it joins them before it
// returns.
func Conn(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
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
