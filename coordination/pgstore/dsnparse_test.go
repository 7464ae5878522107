package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"pgregory.net/rapid"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
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

// leakyURLs are postgres:// URLs whose password holds a character pgx
// reads as the end of the user part (the first '@' or '/') or of a query
// pair ('&', '='), or that RFC 3986 reads so ('?', '#'), each with the
// parts of the password planted so that no error may show them.
var leakyURLs = []struct {
	dsn   string
	parts []string
}{
	// pgx's host becomes "NTED-PW-123@127.0.0.1".
	{"postgres://mg:PLA@NTED-PW-123@127.0.0.1:55432/mg", []string{"PLA", "NTED-PW-123"}},
	// No user part at all: host mg, port 4321, database "SECRET-TAIL@…".
	{"postgres://mg:4321/SECRET-TAIL@127.0.0.1:55432/mg", []string{"4321", "SECRET-TAIL"}},
	{"postgres://mg:SEC/RET-TAIL@127.0.0.1:55432/mg", []string{"SEC", "RET-TAIL"}},
	// The user part runs to the '@' in the query: host "SECRET-TAIL".
	{"postgres://127.0.0.1:55432?password=a@SECRET-TAIL", []string{"SECRET-TAIL"}},
	// pgx's own error quotes the pair it cannot read.
	{"postgres://mg@127.0.0.1:55432/mg?password=x&SECRET-TAIL", []string{"SECRET-TAIL"}},
	{"postgres://mg@127.0.0.1:55432/mg?password=x&SE=CR=ET-TAIL", []string{"SE", "CR", "ET-TAIL"}},
	// pgx reads these as meant, a strict URL reader does not.
	{"postgres://mg:SEC?RET-TAIL@127.0.0.1:55432/mg", []string{"SEC", "RET-TAIL"}},
	{"postgresql://mg:SEC#RET-TAIL@127.0.0.1:55432/mg", []string{"SEC", "RET-TAIL"}},
	// A pair with no key: pgx makes "=TAIL-Y" a setting named "".
	{"postgres://mg@127.0.0.1:55432/mg?password=x&=TAIL-Y", []string{"TAIL-Y"}},
}

// TestAURLWhosePasswordNeedsEncodingIsRefusedUnrepeated: a URL that pgx
// would read otherwise than RFC 3986 does (a password with an unencoded
// '@', '/', '?', '#', '&' or '=') is refused before anything connects,
// with a fixed message that repeats nothing of it and says how to encode
// it. Before, pgx's host or database, read from the password, went into
// the error ("PostgreSQL at NTED-PW-123@127.0.0.1:55432/mg does not
// answer"), and so did pgx's own words for a query pair it could not read.
func TestAURLWhosePasswordNeedsEncodingIsRefusedUnrepeated(t *testing.T) {
	for _, c := range leakyURLs {
		_, err := Open(context.Background(), c.dsn, Options{})
		if err == nil {
			t.Fatalf("%s opened", c.dsn)
		}
		msg := err.Error()
		for _, p := range c.parts {
			if strings.Contains(msg, p) {
				t.Errorf("Open(%s) = %q: it shows %q of the password", c.dsn, msg, p)
			}
		}
		if !strings.Contains(msg, "must be percent-encoded") || !strings.Contains(msg, "%40") {
			t.Errorf("Open(%s) = %q: want the fix, percent-encoding", c.dsn, msg)
		}
		if a := Address(c.dsn); strings.Contains(a, "127.0.0.1") || slices.ContainsFunc(c.parts, func(p string) bool { return strings.Contains(a, p) }) {
			t.Errorf("Address(%s) = %q: want no part of the URL", c.dsn, a)
		}
	}
}

// URLs that read the same either way are not refused: an encoded password,
// several hosts, IPv6, a socket directory, no user part, an empty query.
func TestAURLReadTheSameEitherWayIsNotRefusedForEncoding(t *testing.T) {
	for _, dsn := range []string{
		"postgres://mg:PLA%40NTED%2FPW%3F%23%26%3D@127.0.0.1:55432/mg",
		"postgres://mg:p:w!$'()*+,;=~@127.0.0.1:55432/mg",
		"postgres://mg@h1:55432,h2:55433/mg?target_session_attrs=any",
		"postgres://mg@[::1]:55432/mg",
		"postgres://mg@[::1]:55432,[::2]:55433/mg",
		"postgres:///mg?host=/nonexistent/socket/dir&port=55432",
		"postgresql://127.0.0.1:55432/mg?",
		"postgres://mg@127.0.0.1:55432/mg?password=a%40b&sslmode=disable",
	} {
		if ambiguousURL(dsn) {
			t.Errorf("%s is refused; pgx and RFC 3986 read it alike", dsn)
		}
	}
}

// A key=value DSN pgx cannot read is not quoted in part either: a password
// with a space ends at it, and pgx names the next word it read as a key.
func TestAKeyValueDSNThatDoesNotParseIsNotQuotedInPart(t *testing.T) {
	_, err := Open(context.Background(), "host=127.0.0.1 port=55432 password=SEC RET-TAIL dbname=mg", Options{})
	if err == nil || strings.Contains(err.Error(), "RET-TAIL") || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("Open = %v: want why it does not parse, without the password's tail", err)
	}
}

// Whatever a password holds, a URL that carries it is either refused for
// encoding or read by pgx as written: the user, the host, the port and the
// database its writer meant, and the password too, in the user part or in
// the query, but for a query password's '&'. '%' (which the writer encodes
// with) and spaces (which pgx refuses) are left out.
func TestAPasswordIsReadAsWrittenOrRefused(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		pw := rapid.StringOfN(rapid.SampledFrom([]rune("aZ9-_.~@/?#&=:!$'()*+,;[]")), 1, 12, -1).Draw(rt, "password")
		for _, dsn := range []string{
			"postgres://mg:" + pw + "@127.0.0.1:55432/mg",
			"postgres://mg@127.0.0.1:55432/mg?password=" + pw,
			"postgres://mg@127.0.0.1:55432/mg?sslmode=disable&password=" + pw + "&application_name=t",
		} {
			if ambiguousURL(dsn) {
				continue
			}
			cfg, err := pgconn.ParseConfig(dsn)
			if err != nil {
				continue // refused by pgx, whose words unquoted leaves no key in
			}
			if cfg.User != "mg" || cfg.Host != "127.0.0.1" || cfg.Port != 55432 || cfg.Database != "mg" {
				rt.Fatalf("%s passed, and pgx reads user %q host %q port %d database %q", dsn, cfg.User, cfg.Host, cfg.Port, cfg.Database)
			}
			// A query password's '&' followed by what reads as a setting
			// (ab&cd=ef) cannot be told from one: the server refuses the
			// setting, unrepeated (TestASettingTheServerRefusesIsNotRepeated).
			if cfg.Password != pw && !(strings.Contains(dsn, "?") && strings.Contains(pw, "&")) {
				rt.Fatalf("%s passed, and pgx reads password %q", dsn, cfg.Password)
			}
		}
	})
}

// TestASettingTheServerRefusesIsNotRepeated: a query password cut at its
// '&' leaves its tail as a setting of the connection (?password=ab&cd=ef
// is password ab and setting cd), which the server refuses by name; Open
// says what to check without that name.
func TestASettingTheServerRefusesIsNotRepeated(t *testing.T) {
	pgtest.Schema(t) // skips without a server
	base := pgtest.Base()
	if !strings.Contains(base, "://") {
		t.Skip("MASSGEN_TEST_POSTGRES is not a URL")
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	for _, dsn := range []string{
		base + sep + "password=dummy&planted_tail_7x=y",
		"host=127.0.0.1 password=dummy planted_tail_7x=y " + keyValue(t, base),
	} {
		_, err := Open(context.Background(), dsn, Options{Existing: true})
		if err == nil || strings.Contains(err.Error(), "planted_tail") || !strings.Contains(err.Error(), "42704") || !strings.Contains(err.Error(), "%26") {
			t.Errorf("Open = %v: want the server's refusal of a setting, unnamed, and the fix", err)
		}
	}
}

// keyValue is a URL's user, port and database in key=value form.
func keyValue(t *testing.T, dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("user=%s port=%d dbname=%s", cfg.User, cfg.Port, cfg.Database)
}
