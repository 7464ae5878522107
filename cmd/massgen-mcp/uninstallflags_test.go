package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestUninstallOffersOnlyTheFlagsItHonours: uninstall --help listed
// --force ("install: replace …") and --server-command, which uninstall
// ignores; a flag that does nothing must not be offered. Both are still
// accepted (hidden): scripts pass install's flags to uninstall too.
func TestUninstallOffersOnlyTheFlagsItHonours(t *testing.T) {
	// The dry run reads CODEX_HOME: never the real ~/.codex.
	t.Setenv("CODEX_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out, code := cli(t, "uninstall", "--help")
	flagLine := regexp.MustCompile(`(?m)^\s+--(force|server-command)\b`)
	if code != 0 || flagLine.MatchString(out) || strings.Contains(out, "[--force]") || !strings.Contains(out, "--dry-run") {
		t.Errorf("uninstall --help (exit %d):\n%s", code, out)
	}
	out, code = cli(t, "install", "--help")
	if code != 0 || len(flagLine.FindAllString(out, -1)) != 2 {
		t.Errorf("install --help (exit %d) lost its flags:\n%s", code, out)
	}
	if out, code = cli(t, "uninstall", "codex", "--force", "--server-command", "x", "--dry-run"); code != 0 {
		t.Errorf("uninstall with install's flags (exit %d):\n%s", code, out)
	}
}
