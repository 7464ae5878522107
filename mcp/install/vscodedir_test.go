package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// VS Code on Linux keeps its user directory in $XDG_CONFIG_HOME/Code and
// resolves a relative one against the directory it was launched from
// (VSCODE_CWD; getUserDataPath), not ignoring it as the XDG spec asks.
// Install takes it against the project directory, as `code .` there does,
// and records the absolute path, so an uninstall elsewhere neither drops
// the record nor writes into that directory.
func TestARelativeXDGConfigHomeIsTheProjectsForVSCodeAndRecordedAbsolute(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("VS Code on macOS does not read XDG_CONFIG_HOME")
	}
	o := withEnv(opts(t, "vscode", ScopeUser), "XDG_CONFIG_HOME", "config")
	other := t.TempDir()
	path := filepath.Join(o.Dir, "config", "Code", "User", "mcp.json")

	t.Chdir(o.Dir)
	r := mustInstall(t, o)
	if r.Changes[0].Path != path || r.Changes[0].Action != "created" {
		t.Errorf("install reported %v, want %s created", r.Changes[0], path)
	}
	if !strings.Contains(r.String(), "XDG_CONFIG_HOME (config) is relative") {
		t.Errorf("install did not say that XDG_CONFIG_HOME is relative:\n%s", r)
	}

	t.Chdir(other)
	elsewhere := o
	elsewhere.Dir = other
	if _, err := Uninstall(elsewhere); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(other, "config")); err == nil {
		t.Error("uninstall in another directory wrote into its config")
	}

	t.Chdir(o.Dir)
	r, err := Uninstall(o)
	if err != nil || r.Changes[0].Action != "deleted" {
		t.Fatalf("uninstall in the project: %v %v", r, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the mcp.json install created is still there: %v", err)
	}
}

// VS Code finds its user directory in VSCODE_PORTABLE's user-data (a
// portable install, inherited by its terminal) or VSCODE_APPDATA/Code
// before any per-platform default (getUserDataPath); install wrote the
// default's mcp.json, which that VS Code never reads.
func TestVSCodesUserDirFollowsVSCodeAppDataAndPortable(t *testing.T) {
	o := opts(t, "vscode", ScopeUser)
	appdata, portable := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		o    Options
		want string
	}{
		{withEnv(o, "VSCODE_APPDATA", appdata), filepath.Join(appdata, "Code", "User", "mcp.json")},
		{withEnv(withEnv(o, "VSCODE_APPDATA", appdata), "VSCODE_PORTABLE", portable), filepath.Join(portable, "user-data", "User", "mcp.json")},
	} {
		c.o.DryRun = true
		r := mustInstall(t, c.o)
		if r.Changes[0].Path != c.want {
			t.Errorf("install targets %s, want %s", r.Changes[0].Path, c.want)
		}
	}
}
