package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/mcp/install"
)

// serve started by the Claude Code plugin warns on stderr when Claude Code
// also has the massgen entry install claude-code writes; started otherwise,
// or beside no entry, it says nothing of it.
func TestServeFromThePluginWarnsOfAnEntryBesideIt(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	entry := `{"mcpServers": {"massgen": {"type": "stdio", "command": "massgen-mcp", "args": ["serve"]}}}`
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	const warning = "massgen-mcp: warning: Claude Code runs two identical massgen servers"
	for _, tc := range []struct {
		plugin string
		want   bool
	}{{"1", true}, {"", false}} {
		t.Setenv(install.PluginEnv, tc.plugin)
		out, code := cliIn(t, "", "serve", "--memory")
		if code != 0 || strings.Contains(out, warning) != tc.want {
			t.Errorf("%s=%q: exit %d, want the warning %v:\n%s", install.PluginEnv, tc.plugin, code, tc.want, out)
		}
	}
}
