package pgstore

import (
	"context"
	"strings"
	"testing"
)

// A DSN that does not parse is named in the error by what is wrong with
// it, never by itself, in any part: pgx hides a password only where it
// finds one.
func TestAnAddressThatDoesNotParseKeepsItsPassword(t *testing.T) {
	const secret = "dummy-pw-not-a-secret"
	for _, dsn := range []string{
		"host=localhost password = " + secret + " sslmode=bogus",
		"host=localhost password=" + secret + " port=x",
		"postgres://u:" + secret + "@localhost:5432/db?sslmode=bogus",
		"postgres://u:" + secret + "@localhost:badport/db",
		"host=localhost password=x sslpassword = " + secret + " sslmode=bogus",
	} {
		_, err := Open(context.Background(), dsn, Options{})
		if err == nil {
			t.Fatalf("%q parsed", dsn)
		}
		if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, "localhost") || !strings.Contains(msg, "does not parse") {
			t.Errorf("Open(%q) = %q: want why it does not parse, without the address", dsn, msg)
		}
	}
	_, err := Open(context.Background(), "host=localhost password = "+secret+" sslmode=bogus", Options{})
	if !strings.Contains(err.Error(), "sslmode is invalid") {
		t.Errorf("the error %q does not say what is wrong", err)
	}
}
