package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
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
		_, _, err2 := storeService(context.Background(), t.TempDir(), dsn, "")
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
