package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gemini CLI joins a relative GEMINI_CLI_HOME with .gemini and reads it
// against the directory it starts in. Install takes it against the project
// directory, records the absolute path — so an uninstall elsewhere neither
// drops the record nor writes there — and says, as for CODEX_HOME, that
// Gemini CLI started elsewhere reads another file.
func TestARelativeGeminiCLIHomeIsTheProjectsNotedAndRecordedAbsolute(t *testing.T) {
	o := withEnv(opts(t, "gemini", ScopeUser), "GEMINI_CLI_HOME", "gemini-home")
	other := t.TempDir()
	path := filepath.Join(o.Dir, "gemini-home", ".gemini", "settings.json")

	t.Chdir(o.Dir)
	r := mustInstall(t, o)
	if r.Changes[0].Path != path || r.Changes[0].Action != "created" {
		t.Errorf("install reported %v, want %s created", r.Changes[0], path)
	}
	if !strings.Contains(r.String(), "GEMINI_CLI_HOME (gemini-home) is relative") {
		t.Errorf("install did not say that GEMINI_CLI_HOME is relative:\n%s", r)
	}

	t.Chdir(other)
	elsewhere := o
	elsewhere.Dir = other
	if _, err := Uninstall(elsewhere); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(other, "gemini-home")); err == nil {
		t.Error("uninstall in another directory wrote into its gemini-home")
	}

	t.Chdir(o.Dir)
	r, err := Uninstall(o)
	if err != nil || r.Changes[0].Action != "deleted" {
		t.Fatalf("uninstall in the project: %v %v", r, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the settings.json install created is still there: %v", err)
	}
}
