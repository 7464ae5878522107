package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestOpenSaysWhatToFixByTheDatabasesRefusal: Open's error for a database
// that answers and refuses names the cause its SQLSTATE gives and the fix
// (a role that does not exist: check the role and its password; a
// database that does not exist: create it; a role that may not create in
// the schema: GRANT CREATE, or a schema of its own by search_path; a
// search_path naming no schema the role may use: create one), never the
// "is it running" of a server that does not answer, and never a password.
func TestOpenSaysWhatToFixByTheDatabasesRefusal(t *testing.T) {
	schemaDSN := pgtest.Schema(t)
	ctx := context.Background()
	base, err := url.Parse(pgtest.Base())
	if err != nil || base.Scheme == "" {
		t.Skip("MASSGEN_TEST_POSTGRES is not a URL; the cases rewrite its user and database")
	}
	suffix := randomSuffix()
	role, reader := "massgen_hint_"+suffix, "massgen_hint_ro_"+suffix
	admin, err := pgx.Connect(ctx, pgtest.Base())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	schema := searchPath(t, schemaDSN)
	noUsage := "massgen_hint_nousage_" + suffix
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"CREATE ROLE " + reader + " LOGIN",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role + ", " + reader, // usage, not create
		"CREATE SCHEMA " + noUsage,                                        // neither
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, pgtest.Base())
		if err != nil {
			t.Logf("dropping role %s: %v", role, err)
			return
		}
		defer c.Close(context.Background())
		for _, q := range []string{"DROP SCHEMA IF EXISTS " + noUsage + " CASCADE", "DROP OWNED BY " + role + ", " + reader, "DROP ROLE IF EXISTS " + role + ", " + reader} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Logf("%s: %v", q, err)
			}
		}
	})
	as := func(user, password, db, searchPath string) string {
		u := *base
		if password != "" {
			u.User = url.UserPassword(user, password)
		} else {
			u.User = url.User(user)
		}
		if db != "" {
			u.Path = "/" + db
		}
		q := u.Query()
		if searchPath != "" {
			q.Set("search_path", searchPath)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for _, tc := range []struct {
		name    string
		dsn     string
		want    []string
		wantNot []string
	}{
		{"a role that does not exist", as("massgen_nobody_"+suffix, "dummy-pass-not-a-key", "", ""),
			[]string{"refused the connection", "SQLSTATE 28000", "check the role", "PGPASSWORD", "~/.pgpass", "CREATE ROLE"},
			[]string{"does the database exist", "is it running", "dummy-pass"}},
		{"a database that does not exist", as(base.User.Username(), "", "massgen_nodb_"+suffix, ""),
			[]string{"SQLSTATE 3D000", "create the database", "CREATE DATABASE massgen_nodb_" + suffix},
			[]string{"is it running", "check the role"}},
		{"a role that may not create in the schema", as(role, "", "", schema),
			[]string{"preparing the schema", "SQLSTATE 42501", "current schema (\"" + schema + "\"", "GRANT CREATE ON SCHEMA " + schema + " TO " + role, "search_path=massgen", "CREATE SCHEMA massgen AUTHORIZATION " + role},
			[]string{"is it running"}},
		{"a search_path naming no schema the role may use", as(role, "", "", noUsage),
			[]string{"SQLSTATE 3F000", "names no schema that exists", "CREATE SCHEMA massgen AUTHORIZATION " + role},
			[]string{"is it running"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(ctx, tc.dsn, Options{})
			if err == nil {
				db.Close()
				t.Fatal("opened; want a refusal")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q:\n%v", w, err)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(err.Error(), w) {
					t.Errorf("the error says %q:\n%v", w, err)
				}
			}
		})
	}
	// Granted what the hint names, the same role opens the store there.
	if _, err := admin.Exec(ctx, "GRANT CREATE ON SCHEMA "+schema+" TO "+role); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, as(role, "", "", schema), Options{})
	if err != nil {
		t.Fatalf("after GRANT CREATE ON SCHEMA %s TO %s: %v", schema, role, err)
	}
	db.Close()
	// A command reading a server's sessions (Existing) as a role that may
	// not use the tables is told what to grant, and opens once granted.
	_, err = Open(ctx, as(reader, "", "", schema), Options{Existing: true})
	for _, w := range []string{"checking the schema", "SQLSTATE 42501", "use the role its servers use", "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + reader} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("an existing open by a role without the tables' privileges: the error lacks %q:\n%v", w, err)
		}
	}
	if _, err := admin.Exec(ctx, "SET ROLE "+role+"; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "+schema+" TO "+reader+"; RESET ROLE"); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, as(reader, "", "", schema), Options{Existing: true})
	if err != nil {
		t.Fatalf("after the grant the hint names: %v", err)
	}
	db.Close()
}

func randomSuffix() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// searchPath is the schema a pgtest DSN's connections use.
func searchPath(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}
