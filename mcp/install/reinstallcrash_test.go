package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A reinstall that changes the entry saves its record before it writes the
// config; killed between the two (Ctrl-C), the config still holds the entry
// the previous install wrote. That entry is still install's own: running
// install again replaces it, and uninstall removes it, rather than calling
// it the user's (refused without --force, then "put back" by uninstall).
func TestAReinstallKilledBeforeItsWriteStillKnowsItsOwnEntry(t *testing.T) {
	o := opts(t, "cursor", ScopeUser)
	path := filepath.Join(o.Home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(`{"mcpServers": {"other": {"command": "o"}}}`+"\n"), 0o600)
	mustInstall(t, o)
	old := read(t, path)

	// The reinstall with a new command, killed after its record landed.
	o.Command = "/opt/massgen/bin/massgen-mcp"
	mustInstall(t, o)
	os.WriteFile(path, old, 0o600) // as if the config write never happened

	if _, err := Install(o); err != nil {
		t.Fatalf("install again after the killed reinstall: %v", err)
	}
	if got := string(read(t, path)); !strings.Contains(got, "/opt/massgen/bin/massgen-mcp") {
		t.Fatalf("not replaced:\n%s", got)
	}

	// Killed again, then uninstalled: the entry install wrote goes.
	o.Command = "/usr/local/bin/massgen-mcp"
	before := read(t, path)
	mustInstall(t, o)
	os.WriteFile(path, before, 0o600)
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, path)); strings.Contains(got, "massgen-mcp") || !strings.Contains(got, `"other"`) {
		t.Fatalf("uninstall left install's own entry (or lost the user's):\n%s", got)
	}
}
