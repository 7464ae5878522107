package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Claude Code takes a relative CLAUDE_CONFIG_DIR as Node takes any
// relative path, against the directory it starts in, and keeps .claude.json
// and settings.json there. Install must take it against the project
// directory and record the absolute path: a relative record matched
// whatever directory uninstall ran in, so an uninstall elsewhere dropped it
// (or wrote there), and the file install created could no longer be undone.
func TestARelativeClaudeConfigDirIsTheProjectsAndRecordedAbsolute(t *testing.T) {
	o := withEnv(opts(t, "claude-code", ScopeUser), "CLAUDE_CONFIG_DIR", "claude-config")
	other := t.TempDir()
	path := filepath.Join(o.Dir, "claude-config", ".claude.json")

	t.Chdir(o.Dir) // where a relative path lands if it is never resolved
	r := mustInstall(t, o)
	if r.Changes[0].Path != path || r.Changes[0].Action != "created" {
		t.Errorf("install reported %v, want %s created", r.Changes[0], path)
	}
	if !strings.Contains(r.String(), "CLAUDE_CONFIG_DIR (claude-config) is relative") {
		t.Errorf("install did not say that CLAUDE_CONFIG_DIR is relative:\n%s", r)
	}

	// Claude Code started in another directory reads that directory's
	// claude-config, which install never wrote.
	t.Chdir(other)
	elsewhere := o
	elsewhere.Dir = other
	if _, err := Uninstall(elsewhere); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(other, "claude-config")); err == nil {
		t.Error("uninstall in another directory wrote into its claude-config")
	}

	t.Chdir(o.Dir)
	r, err := Uninstall(o)
	if err != nil || r.Changes[0].Action != "deleted" {
		t.Fatalf("uninstall in the project: %v %v", r, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the .claude.json install created is still there: %v", err)
	}
}

// The plugin enabled under a relative CLAUDE_CONFIG_DIR is found in the
// project's, wherever install itself was started from.
func TestAPluginUnderARelativeClaudeConfigDirIsSeen(t *testing.T) {
	o := withEnv(opts(t, "claude-code", ScopeUser), "CLAUDE_CONFIG_DIR", "claude-config")
	withPlugin(t, filepath.Join(o.Dir, "claude-config"), true)
	t.Chdir(t.TempDir())
	if _, err := Install(o); !errors.Is(err, ErrPluginEnabled) {
		t.Errorf("plugin enabled under the project's claude-config: %v", err)
	}
}
