package cliagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shells a CLI runs read their startup files in HOME (Claude Code's
// shell snapshot sources ~/.bashrc in a login shell; Codex runs commands in
// login shells): one a command wrote would run, unjudged, before the run's
// later commands. Each is an empty read-only file in the sandbox, whatever
// is planted where the agent's directory keeps its state, and the agent
// cannot write one.
func TestAShellStartupFileInTheAgentsHOMEIsEmptyAndReadOnly(t *testing.T) {
	sb := sandboxed(t)
	h := newHarness(t, "shellrc", func(o *Options) { o.Sandbox = sb })
	if _, _, err := h.step(h.request()); err != nil {
		t.Fatal(err)
	}
	var home string
	filepath.WalkDir(h.opts.Dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "home" && home == "" {
			home = path
		}
		return nil
	})
	if home == "" {
		t.Fatalf("no agent HOME under %s", h.opts.Dir)
	}
	for _, name := range shellStartupFiles {
		os.WriteFile(filepath.Join(home, name), []byte("planted"), 0o600)
	}
	act, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(act.Text, "planted") || strings.Contains(act.Text, "none") || !strings.HasSuffix(act.Text, "write=refused") {
		t.Errorf("the sandboxed CLI saw %s; want every startup file empty and no write", act.Text)
	}
}
