package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestStoreFlagsMaskEveryPassword: the status and approve commands print
// the store flags to paste; a URL's sslpassword (a client key's
// passphrase, which pgx takes) is masked as its password is.
func TestStoreFlagsMaskEveryPassword(t *testing.T) {
	got := storeFlags("postgres://massgen:dummy-pass-not-a-key@db/massgen?sslmode=verify-full&sslkey=/k.pem&sslpassword=dummy-ssl-not-a-key&password=dummy-q-not-a-key", "")
	if strings.Contains(got, "dummy") {
		t.Errorf("storeFlags prints a password: %q", got)
	}
	if !strings.Contains(got, "sslmode=verify-full") || !strings.Contains(got, "sslkey=") {
		t.Errorf("storeFlags lost the settings around the passwords: %q", got)
	}
}

// TestARefusedStoreIsNotEchoed: a --store value that is not recognised (a
// key=value DSN, an upper-case scheme, a driver-qualified URL) may still
// carry a password; the refusal says what it was without repeating it, in
// serve and in the commands that read a server's store.
func TestARefusedStoreIsNotEchoed(t *testing.T) {
	for dsn, says := range map[string]string{
		"host=db user=massgen password=dummy-not-a-key dbname=massgen": "key=value connection string",
		"Postgres://massgen:dummy-not-a-key@db/massgen":                `scheme "Postgres"`,
		"postgresql+psycopg://massgen:dummy-not-a-key@db/massgen":      `scheme "postgresql+psycopg"`,
		"dummy-not-a-key": `"dummy-not-a-key"`, // a word: shown, as a typo of file would be
	} {
		_, err := servedStores(context.Background(), serveFlags{store: dsn})
		_, _, _, err2 := storeService(context.Background(), t.TempDir(), dsn, "")
		for _, err := range []error{err, err2} {
			if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), says) {
				t.Errorf("%q: refused with %v, want a bad input saying %s", dsn, err, says)
			}
			if says[0] != '"' && strings.Contains(err.Error(), "dummy") {
				t.Errorf("%q: the refusal repeats the password: %v", dsn, err)
			}
		}
	}
}

// TestSessionsAndCancelReachAPostgreSQLStore: with the store replicas
// share, `sessions` lists a tenant's sessions and `cancel` stops one,
// from any machine that reaches the database; the commands that read a
// file store alone (fsck, apply) refuse under $MASSGEN_STORE rather than
// read a replica's working copies as sessions.
func TestSessionsAndCancelReachAPostgreSQLStore(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	svc := coordination.NewService(pgTenant(t, dsn, "acme"), coordination.Options{Open: backends.Open})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 6 * 7?", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := cliSplit(t, "sessions", "--store", dsn, "--tenant", "acme"); code != 0 || !strings.Contains(out, s.ID) || !strings.Contains(out, "6 * 7") {
		t.Fatalf("sessions --store: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, _ := cliSplit(t, "sessions", "--store", dsn); strings.Contains(out, s.ID) {
		t.Errorf("the default tenant lists acme's session:\n%s", out)
	}
	if out, errOut, code := cliSplit(t, "cancel", "--store", dsn, "--tenant", "acme", s.ID); code != 0 || !strings.Contains(out, "cancelled (by request)") {
		t.Fatalf("cancel --store: exit %d\n%s%s", code, out, errOut)
	}
	if res, err := svc.Result(ctx, s.ID); err != nil || res.Status != coordination.StatusCancelled {
		t.Errorf("after cancel --store the session reads %v, %v", res, err)
	}
	t.Setenv("MASSGEN_STORE", dsn)
	for _, verb := range []string{"fsck", "apply"} {
		if _, errOut, code := cliSplit(t, verb, "--state-dir", t.TempDir(), s.ID); code != exitBadInput || !strings.Contains(errOut, "PostgreSQL store") {
			t.Errorf("%s under a PostgreSQL $MASSGEN_STORE: exit %d %s", verb, code, errOut)
		}
	}
}

// TestAServesMemoryStoreLeavesTheCommandsOnTheFileStore: $MASSGEN_STORE
// exported for serve as memory is no store another command can reach:
// sessions and cancel read the file store as before.
func TestAServesMemoryStoreLeavesTheCommandsOnTheFileStore(t *testing.T) {
	t.Setenv("MASSGEN_STORE", "memory")
	if out, errOut, code := cliSplit(t, "sessions", "--state-dir", t.TempDir()); code != 0 {
		t.Errorf("sessions under MASSGEN_STORE=memory: exit %d\n%s%s", code, out, errOut)
	}
}
