package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplysHintsKeepTheStateDir: run --state-dir D with a write context
// ended "then `massgen-mcp apply ID` writes them", and apply --state-dir D
// of a session not there advised "massgen-mcp sessions", both of which,
// pasted, look in ./.massgen and find no such session.
func TestApplysHintsKeepTheStateDir(t *testing.T) {
	dir, project := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "README"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "run", "--plain", "--state-dir", dir, "--session-id", "team_apply", "--context-path", project+":write", "--models", "sim,sim", "--seed", "1", "Build a one-page landing site for a bakery")
	if want := "`massgen-mcp apply --state-dir " + shellQuote(dir) + " team_apply` writes them"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("run with a write context (exit %d) should say %q:\n%s", code, want, out)
	}
	out, code = cli(t, "apply", "--state-dir", dir, "team_nosuch")
	if want := "massgen-mcp sessions --state-dir " + shellQuote(dir); code == 0 || !strings.Contains(out, want) {
		t.Errorf("apply of a session not there (exit %d) should advise %q:\n%s", code, want, out)
	}
}
