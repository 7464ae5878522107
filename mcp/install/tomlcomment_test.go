package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A comment the user wrote above a table that follows the massgen one is
// about that table: taking the massgen table out (uninstall of a file edited
// since) or replacing it (a reinstall with a new entry) must leave it.
func TestCodexCommentAboveTheNextTableSurvivesUninstallAndReinstall(t *testing.T) {
	o := opts(t, "codex", ScopeUser)
	path := filepath.Join(o.Home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(codexConfig), 0o600)
	mustInstall(t, o)
	const theirs = "\n# the work server: do not remove, see ticket 42\n[mcp_servers.work]\ncommand = \"work-server\"\n"
	os.WriteFile(path, append(read(t, path), theirs...), 0o600)

	o.Command = "/opt/massgen/bin/massgen-mcp"
	mustInstall(t, o)
	if got := string(read(t, path)); !strings.Contains(got, "ticket 42") {
		t.Fatalf("a reinstall deleted the user's comment above the next table:\n%s", got)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, path)); !strings.Contains(got, "ticket 42") || strings.Contains(got, "massgen-mcp") {
		t.Fatalf("uninstall deleted the user's comment above the next table:\n%s", got)
	}
}
