package pgstore

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// The DSN's own settings read as pgx reads them: pgx keeps a key it does
// not know as a runtime parameter, so x, y and z show what it read.
func TestDSNSettingsReadAsPgxReadsThem(t *testing.T) {
	for _, dsn := range []string{
		`host=db x='a b' y='c\'d' z=e\ f`,
		`host=db   x = 'q=1 w'   y=plain z=''`,
		`x=\\back y='\\' z=tail\`,
		"host=db\tx='tab\tbed'\ny=nl",
		`postgres://mg@db:5432/mg?x=a%20b&y=%2Fsrv%2Fp&z=%27q%27`,
		`postgresql://mg:pw@db/mg?x= spaced &y=a+b`,
		`postgres:///mg?host=/run/postgresql&x=1`,
	} {
		cfg, err := pgconn.ParseConfig(dsn)
		if err != nil {
			t.Fatalf("pgx does not read %q: %v", dsn, err)
		}
		mine := dsnSettings(dsn)
		for _, k := range []string{"x", "y", "z"} {
			want, pgxHas := cfg.RuntimeParams[k]
			got, has := mine[k]
			if pgxHas != has || got != want {
				t.Errorf("%q: %s = %q (%v); pgx read %q (%v)", dsn, k, got, has, want, pgxHas)
			}
		}
	}
}
