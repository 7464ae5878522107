package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write puts a file under a temporary home or project, parents and all.
func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withPlugin records the massgen plugin as Claude Code does on
// `claude plugin install massgen@massgen-mcp`: in plugins/installed_plugins.json
// and, enabled (or not), in the user's settings.json.
func withPlugin(t *testing.T, dir string, enabled bool) {
	t.Helper()
	write(t, filepath.Join(dir, "plugins", "installed_plugins.json"), `{"version": 2, "plugins": {"massgen@massgen-mcp": [
  {"scope": "user", "installPath": "`+dir+`/plugins/cache/massgen-mcp/massgen/0.1.0", "version": "0.1.0", "installedAt": "2026-12-01T09:00:00.000Z", "lastUpdated": "2026-12-01T09:00:00.000Z"}]}}`)
	on := "false"
	if enabled {
		on = "true"
	}
	write(t, filepath.Join(dir, "settings.json"), `{
  // Claude Code writes plain JSON; a comment must not hide the plugin.
  "model": "opus",
  "enabledPlugins": {"other@somewhere": true, "massgen@massgen-mcp": `+on+`}
}`)
}

// install claude-code with the plugin enabled would make Claude Code run
// two identical servers (massgen and plugin:massgen:massgen): it refuses,
// names the plugin and where it is enabled, says which to keep, writes
// nothing — and --force installs beside it with a note.
func TestInstallClaudeCodeRefusesBesideTheEnabledPlugin(t *testing.T) {
	for _, scope := range []string{ScopeUser, ScopeProject} {
		o := opts(t, "claude-code", scope)
		claude := filepath.Join(o.Home, ".claude")
		withPlugin(t, claude, true)
		_, err := Install(o)
		if !errors.Is(err, ErrPluginEnabled) {
			t.Fatalf("%s: install beside the enabled plugin: %v", scope, err)
		}
		for _, want := range []string{"massgen@massgen-mcp plugin is enabled", filepath.Join(claude, "settings.json"), "plugin:massgen:massgen",
			"Keep the plugin", "claude plugin disable massgen@massgen-mcp", "--force"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal lacks %q:\n%v", scope, want, err)
			}
		}
		for _, p := range []string{filepath.Join(o.Home, ".claude.json"), filepath.Join(o.Dir, ".mcp.json")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: a refused install wrote %s", scope, p)
			}
		}
		o.Force = true
		r := mustInstall(t, o)
		if !r.Changed() || !strings.Contains(r.String(), "--force installed beside the enabled massgen@massgen-mcp plugin") {
			t.Errorf("%s: --force: %s", scope, r)
		}
	}
}

// The plugin enabled only in this project's settings (shared or local)
// is a duplicate here too; a plugin installed but disabled is not, and
// install only notes that enabling it would be.
func TestInstallClaudeCodeReadsEveryScopeThatEnablesThePlugin(t *testing.T) {
	for _, file := range []string{"settings.json", "settings.local.json"} {
		o := opts(t, "claude-code", ScopeUser)
		write(t, filepath.Join(o.Dir, ".claude", file), `{"enabledPlugins": {"massgen@my-fork": true}}`)
		if _, err := Install(o); !errors.Is(err, ErrPluginEnabled) || !strings.Contains(err.Error(), "massgen@my-fork") {
			t.Errorf("plugin enabled in the project's %s: %v", file, err)
		}
	}
	o := opts(t, "claude-code", ScopeUser)
	withPlugin(t, filepath.Join(o.Home, ".claude"), false)
	r := mustInstall(t, o)
	if !strings.Contains(r.String(), "installed in Claude Code but not enabled; enabling it (claude plugin enable massgen@massgen-mcp) would run a second") {
		t.Errorf("a disabled plugin is not noted:\n%s", r)
	}
	// CLAUDE_CONFIG_DIR moves Claude Code's settings and plugins too.
	o = opts(t, "claude-code", ScopeUser)
	cfg := t.TempDir()
	env := o.Env
	o.Env = func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return cfg
		}
		return env(k)
	}
	withPlugin(t, cfg, true)
	if _, err := Install(o); !errors.Is(err, ErrPluginEnabled) {
		t.Errorf("plugin enabled under $CLAUDE_CONFIG_DIR: %v", err)
	}
	// Nothing of the plugin: install as ever, no word of it.
	o = opts(t, "claude-code", ScopeUser)
	if r := mustInstall(t, o); strings.Contains(r.String(), "plugin") {
		t.Errorf("without the plugin the report speaks of it:\n%s", r)
	}
}

// The plugin's server, started beside an entry install claude-code wrote,
// says so and which to keep; beside none it says nothing.
func TestThePluginsServerNoticesAnEntryBesideIt(t *testing.T) {
	o := opts(t, "claude-code", ScopeUser)
	withPlugin(t, filepath.Join(o.Home, ".claude"), true)
	if w := BesidePlugin(o); w != "" {
		t.Errorf("no entry, yet: %s", w)
	}
	write(t, filepath.Join(o.Home, ".claude.json"), `{"numStartups": 3, "mcpServers": {"massgen": {"type": "stdio", "command": "massgen-mcp", "args": ["serve"]}}}`)
	w := BesidePlugin(o)
	for _, want := range []string{"two identical massgen servers", "massgen@massgen-mcp plugin (plugin:massgen:massgen)",
		"the massgen entry in " + filepath.Join(o.Home, ".claude.json") + " (massgen-mcp uninstall claude-code removes it)", "claude plugin disable massgen@massgen-mcp"} {
		if !strings.Contains(w, want) {
			t.Errorf("the warning lacks %q:\n%s", want, w)
		}
	}
	// A project's .mcp.json entry is one too, with its own way out.
	o = opts(t, "claude-code", ScopeUser)
	write(t, filepath.Join(o.Dir, ".mcp.json"), `{"mcpServers": {"massgen": {"command": "massgen-mcp", "args": ["serve"]}}}`)
	if w := BesidePlugin(o); !strings.Contains(w, "uninstall claude-code --scope project") {
		t.Errorf("a project entry: %q", w)
	}
	// Other servers are no concern.
	o = opts(t, "claude-code", ScopeUser)
	write(t, filepath.Join(o.Home, ".claude.json"), `{"mcpServers": {"other": {"command": "x"}}}`)
	if w := BesidePlugin(o); w != "" {
		t.Errorf("another server: %s", w)
	}
}
