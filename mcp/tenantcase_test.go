package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tenant names that differ only in letter case are one directory on a
// case-insensitive filesystem (macOS, Windows, casefold ext4, SMB, exFAT):
// one tenant would read and write the other's sessions. The tokens file
// refuses them on every OS, so a move between stores never merges tenants.
func TestTokensFileRefusesTenantsEqualButForCase(t *testing.T) {
	const carolToken = "sk-test-dummy-not-a-key-carol-0123456789"
	path := filepath.Join(t.TempDir(), "tokens")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ file, first, second string }{
		{"Alice " + aliceToken + "\nalice " + bobToken + "\n", "Alice", "alice"},
		{"bob " + bobToken + "\nalice " + aliceToken + "\nALICE " + carolToken + "\n", "alice", "ALICE"},
		// The default tenant always exists (the operator's, stdio's).
		{"Default " + aliceToken + "\n", "default", "Default"},
	} {
		write(c.file)
		_, err := LoadTokens(path)
		if err == nil {
			t.Errorf("tokens file %q accepted", c.file)
			continue
		}
		msg := err.Error()
		for _, want := range []string{`"` + c.first + `"`, `"` + c.second + `"`, "letter case"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error for %q does not say %s: %v", c.file, want, err)
			}
		}
		for _, tok := range []string{aliceToken, bobToken, carolToken} {
			if strings.Contains(msg, tok) {
				t.Errorf("the error shows a token: %v", err)
			}
		}
	}

	// One tenant may hold several tokens, and a reload to a file with a
	// case clash keeps the tokens loaded before.
	write("alice " + aliceToken + "\nalice " + bobToken + "\n")
	tok, err := LoadTokens(path)
	if err != nil {
		t.Fatalf("one tenant with two tokens refused: %v", err)
	}
	write("alice " + aliceToken + "\nAlice " + bobToken + "\n")
	if err := tok.Reload(); err == nil {
		t.Error("a reload to tenants equal but for case was accepted")
	}
	if got, ok := tok.tenant([]byte(bobToken)); !ok || got != "alice" {
		t.Errorf("a refused reload changed the tokens: bob's token is %q, %v", got, ok)
	}
}
