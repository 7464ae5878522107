package main

import (
	"strings"
	"testing"
)

// TestUninstallOffersOnlyTheFlagsItHonours: uninstall --help listed
// --force ("install: replace …") and --server-command, which uninstall
// ignores; a flag that does nothing must not be offered, and one given is
// refused rather than silently dropped.
func TestUninstallOffersOnlyTheFlagsItHonours(t *testing.T) {
	// Never the real ~/.codex, should the flag slip through again.
	t.Setenv("CODEX_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out, code := cli(t, "uninstall", "--help")
	if code != 0 || strings.Contains(out, "--force") || strings.Contains(out, "--server-command") || !strings.Contains(out, "--dry-run") {
		t.Errorf("uninstall --help (exit %d):\n%s", code, out)
	}
	out, code = cli(t, "install", "--help")
	if code != 0 || !strings.Contains(out, "--force") || !strings.Contains(out, "--server-command") {
		t.Errorf("install --help (exit %d) lost its flags:\n%s", code, out)
	}
	if out, code = cli(t, "uninstall", "codex", "--force", "--dry-run"); code == 0 || !strings.Contains(out, "unknown flag: --force") {
		t.Errorf("uninstall --force (exit %d) should be refused:\n%s", code, out)
	}
}
