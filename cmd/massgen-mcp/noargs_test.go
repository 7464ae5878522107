package main

import (
	"strings"
	"testing"
)

// TestAStrayArgumentIsNotRepeated: a DSN whose --store was forgotten, or a
// key=value DSN left unquoted, is refused without being repeated (its
// password would reach the terminal and the logs it is copied to); a
// plain word, a mistyped subcommand, is still named.
func TestAStrayArgumentIsNotRepeated(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "postgres://mg:PLANTED-not-a-password@127.0.0.1/mg"},
		{"serve", "--http", "127.0.0.1:0", "--store", "host=127.0.0.1", "password=PLANTED-not-a-password"},
		{"sessions", "password=PLANTED-not-a-password"},
		{"postgres://mg:PLANTED-not-a-password@127.0.0.1/mg"},
		{"DUMMY-NOT-A-TOKEN-0000-0000"},
	} {
		out, code := cli(t, args...)
		stray := args[len(args)-1]
		if code != exitBadInput || strings.Contains(out, stray) || strings.Contains(out, "PLANTED") || !strings.Contains(out, "takes no arguments") {
			t.Errorf("%q: exit %d:\n%s", args, code, out)
		}
	}
	if out, code := cli(t, "serve", "stdio"); code != exitBadInput || !strings.Contains(out, `unknown command "stdio"`) {
		t.Errorf("a plain word: exit %d:\n%s", code, out)
	}
	if out, code := cli(t, "sreve"); code != exitBadInput || !strings.Contains(out, `unknown command "sreve"`) || !strings.Contains(out, "serve") {
		t.Errorf("a mistyped command: exit %d:\n%s", code, out)
	}
	if out, code := cli(t, "--verbose"); code != exitOK || !strings.Contains(out, "Available Commands") {
		t.Errorf("no command at all: exit %d:\n%s", code, out)
	}
}
