package pgstore

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestWithSchemaKeepsASocketURL: a URL naming a Unix socket directory as
// its host (percent-encoded, as libpq writes it) is one net/url does not
// parse; its schema still goes in as a query setting pgx reads, and the
// rest of the URL stays as written.
func TestWithSchemaKeepsASocketURL(t *testing.T) {
	for _, tc := range []struct{ dsn, host, db string }{
		{"postgres://postgres@%2Fvar%2Frun%2Fpostgresql/test?sslmode=disable", "/var/run/postgresql", "test"},
		{"postgres://postgres@%2Ftmp/test", "/tmp", "test"},
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "127.0.0.1", "test"},
		{"postgres:///test?host=/var/run/postgresql", "/var/run/postgresql", "test"},
		{"host=/var/run/postgresql user=postgres dbname=test", "/var/run/postgresql", "test"},
	} {
		got := WithSchema(tc.dsn, "massgen_x")
		cfg, err := pgconn.ParseConfig(got)
		if err != nil {
			t.Fatalf("WithSchema(%q) = %q, which pgx does not parse: %v", tc.dsn, got, err)
		}
		if cfg.Host != tc.host || cfg.Database != tc.db || cfg.RuntimeParams["search_path"] != "massgen_x" {
			t.Errorf("WithSchema(%q) = %q: pgx reads host %q, database %q, search_path %q; want %q, %q, massgen_x",
				tc.dsn, got, cfg.Host, cfg.Database, cfg.RuntimeParams["search_path"], tc.host, tc.db)
		}
	}
}
