package main

import (
	"strings"
	"testing"
)

// storeURLsToEncode are --store URLs whose password holds a character
// that pgx reads as the end of the user part ('@', '/') or of a query
// pair ('&'), or that a strict URL reader does ('?', '#'), with the parts
// of the password that no output may show.
var storeURLsToEncode = []struct {
	dsn   string
	parts []string
}{
	{"postgres://mg:PLA@NTED-PW-123@127.0.0.1:55432/mg", []string{"PLA", "NTED-PW-123"}},
	{"postgres://mg:4321/SECRET-TAIL@127.0.0.1:55432/mg", []string{"4321", "SECRET-TAIL"}},
	{"postgres://127.0.0.1:55432?password=a@SECRET-TAIL", []string{"SECRET-TAIL"}},
	{"postgres://mg@127.0.0.1:55432/mg?password=x&SECRET-TAIL", []string{"SECRET-TAIL"}},
	{"postgresql://mg:SEC?RET-TAIL@127.0.0.1:55432/mg", []string{"SEC", "RET-TAIL"}},
}

// TestAStoreURLWhosePasswordNeedsEncodingShowsNoneOfIt: serve and the
// session commands, given such a URL by --store or $MASSGEN_STORE, refuse
// it saying how to encode the password, and print no part of it. Before,
// "serve --store postgres://mg:PLA@NTED-PW-123@127.0.0.1:55432/mg" said
// "PostgreSQL at NTED-PW-123@127.0.0.1:55432/mg does not answer", and
// pgx's words for a query pair it could not read named the pair.
func TestAStoreURLWhosePasswordNeedsEncodingShowsNoneOfIt(t *testing.T) {
	t.Setenv("MASSGEN_STORE", "")
	commands := func(store []string) [][]string {
		return [][]string{
			append([]string{"sessions"}, store...),
			append([]string{"sessions", "prune", "--older-than", "30d"}, store...),
			append([]string{"status", "s1"}, store...),
			append([]string{"cancel", "s1"}, store...),
			append([]string{"approve", "r1"}, store...),
			append([]string{"serve", "--state-dir", t.TempDir()}, store...),
		}
	}
	for _, c := range storeURLsToEncode {
		check := func(from string, args []string) {
			t.Helper()
			out, code := cli(t, args...)
			if code == 0 || !strings.Contains(out, "must be percent-encoded") {
				t.Errorf("%s %s (%s): exit %d; want the password's encoding refused:\n%s", args[0], c.dsn, from, code, out)
			}
			for _, p := range c.parts {
				if strings.Contains(out, p) {
					t.Errorf("%s %s (%s) shows %q of the password:\n%s", args[0], c.dsn, from, p, out)
				}
			}
		}
		for _, args := range commands([]string{"--store", c.dsn}) {
			check("--store", args)
		}
		t.Setenv("MASSGEN_STORE", c.dsn)
		for _, args := range commands(nil) {
			check("$MASSGEN_STORE", args)
		}
		t.Setenv("MASSGEN_STORE", "")
	}
}
