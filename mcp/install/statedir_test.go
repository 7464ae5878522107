package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The XDG Base Directory spec makes a relative XDG_STATE_HOME invalid, to
// be ignored. Used as given, it kept the records under whatever directory
// install ran in — scattered into the project — and an uninstall from
// another directory found none, so a file install created stayed behind.
func TestARelativeXDGStateHomeIsIgnored(t *testing.T) {
	o := withEnv(opts(t, "cursor", ScopeUser), "XDG_STATE_HOME", "state")
	path := filepath.Join(o.Home, ".cursor", "mcp.json")

	t.Chdir(o.Dir)
	r := mustInstall(t, o)
	if !strings.Contains(r.String(), "XDG_STATE_HOME (state) is relative") {
		t.Errorf("install did not say that XDG_STATE_HOME is ignored:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "state")); err == nil {
		t.Error("install kept its records in the project directory")
	}
	if _, err := os.Stat(recordPath(filepath.Join(o.Home, ".local", "state", "massgen-mcp"), path)); err != nil {
		t.Errorf("the record is not under ~/.local/state/massgen-mcp: %v", err)
	}

	other := t.TempDir()
	t.Chdir(other)
	o.Dir = other
	r, err := Uninstall(o)
	if err != nil || r.Changes[0].Action != "deleted" {
		t.Fatalf("uninstall from another directory: %v %v", r, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the mcp.json install created is still there: %v", err)
	}
}
