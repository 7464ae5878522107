package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A project's .mcp.json is shared with the repository, so its entry must not
// name this machine's path to the binary: with massgen-mcp on PATH it names
// the command, and only with none there (or in a user's own config) the
// absolute path, saying so. Run here from off PATH, as a build in a checkout
// is, beside another massgen-mcp on PATH.
func TestAProjectEntryNamesMassgenMcpFromPathNotThisMachinesPath(t *testing.T) {
	bin := binary(t)
	self, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	withMassgen, without := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(withMassgen, "massgen-mcp"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, scope, want, note string
	}{
		{"project, on PATH", withMassgen, "project", "massgen-mcp", "from PATH"},
		{"project, not on PATH", without, "project", self, "absolute path"},
		{"user, another on PATH", withMassgen, "user", self, "absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, proj := t.TempDir(), t.TempDir()
			cmd := exec.Command(bin, "install", "claude-code", "--scope", tc.scope)
			cmd.Env, cmd.Dir = []string{"HOME=" + home, "PATH=" + tc.path}, proj
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			cfg := filepath.Join(home, ".claude.json")
			if tc.scope == "project" {
				cfg = filepath.Join(proj, ".mcp.json")
			}
			data, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				MCPServers map[string]struct {
					Command string `json:"command"`
				} `json:"mcpServers"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if got := doc.MCPServers["massgen"].Command; got != tc.want {
				t.Errorf("the entry runs %q, want %q", got, tc.want)
			}
			if !strings.Contains(string(out), tc.note) {
				t.Errorf("the output does not say %q:\n%s", tc.note, out)
			}
		})
	}
}

func TestChooseCommandKeepsAbsolutePathsOutOfProjectFiles(t *testing.T) {
	const self, other = "/home/u/src/massgen-mcp/bin/massgen-mcp", "/usr/local/bin/massgen-mcp"
	for _, tc := range []struct {
		scope, onPath, want, note string
	}{
		{"project", self, "massgen-mcp", ""},
		{"user", self, "massgen-mcp", ""},
		{"project", other, "massgen-mcp", "from PATH (here " + other},
		{"project", "", self, "only this machine has"},
		{"user", other, self, "is another one"},
		{"user", "", self, "not on PATH"},
	} {
		got, note := chooseCommand(tc.scope, self, tc.onPath)
		if got != tc.want || (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("%s scope, PATH finds %q: %q with note %q, want %q with a note saying %q", tc.scope, tc.onPath, got, note, tc.want, tc.note)
		}
	}
}
