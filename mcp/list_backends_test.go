package mcp

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

func TestListBackends(t *testing.T) {
	// No keys anywhere: the environment's are blanked and $HOME has no .env.
	t.Setenv("HOME", t.TempDir())
	for _, info := range providers.Backends() {
		for _, k := range info.KeyEnv {
			t.Setenv(k, "")
		}
	}
	c := inProcess(t, newMemServer(t, Options{}), false)
	var out listBackendsResult
	res := callTool(t, c, "list_backends", `{}`)
	decode(t, res, &out)
	byName := map[string]backendView{}
	for _, b := range out.Backends {
		byName[b.Name] = b
		if b.KeyEnv == nil || b.Note == "" || b.Example == "" {
			t.Errorf("%s: incomplete entry %+v", b.Name, b)
		}
	}
	for _, info := range providers.Backends() {
		if _, ok := byName[info.Name]; !ok {
			t.Errorf("backend %s is not listed", info.Name)
		}
	}
	for _, name := range []string{"sim", "host"} {
		if b := byName[name]; !b.Usable || !b.Implemented {
			t.Errorf("%s must be usable: %+v", name, b)
		}
	}
	for _, name := range []string{"openai", "claude", "gemini", "grok"} {
		if b := byName[name]; b.Usable {
			t.Errorf("%s cannot be usable without its key: %+v", name, b)
		}
	}
	if out.DefaultTeam.Models == nil || len(out.DefaultTeam.Models) != 0 || !strings.Contains(out.DefaultTeam.Note, "sim") {
		t.Errorf("default team without keys: %+v", out.DefaultTeam)
	}
	if !strings.Contains(text(res), "| sim | yes |") {
		t.Errorf("text rendering:\n%s", text(res))
	}
	// The sandbox line is the probe's verdict, whichever it is here.
	ok, why := sandbox.Probe()
	if out.Sandbox.Available != ok || out.Sandbox.Note != why || !strings.Contains(text(res), "Sandbox for agents' commands (run_command, stdio MCP servers): ") || !strings.Contains(text(res), why) {
		t.Errorf("sandbox %+v, the probe says %v %q; text:\n%s", out.Sandbox, ok, why, text(res))
	}
}

// TestListBackendsSchemaSnapshot pins list_backends's definition (testdata/toolsnaps/list_backends.json).
func TestListBackendsSchemaSnapshot(t *testing.T) { checkToolSnap(t, "list_backends") }
