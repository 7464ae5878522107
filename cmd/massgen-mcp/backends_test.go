package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

const cliPlantedKey = "dummy.PLANTED.cli.key.0123456789"

// isolateBackends points every variable, .env file and PATH lookup at the
// test's own directories, and every local server at a closed port.
func isolateBackends(t *testing.T, dotenv string) {
	t.Helper()
	for _, info := range providers.Backends() {
		for _, k := range append(append([]string{}, info.KeyEnv...), info.ExtraEnv...) {
			t.Setenv(k, "")
		}
		if info.BaseURLEnv != "" {
			t.Setenv(info.BaseURLEnv, "")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	for _, k := range []string{"VLLM_BASE_URL", "SGLANG_BASE_URL", "LMSTUDIO_BASE_URL", "OLLAMA_BASE_URL"} {
		t.Setenv(k, closed)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	work := t.TempDir()
	if dotenv != "" {
		if err := os.WriteFile(filepath.Join(work, ".env"), []byte(dotenv), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)
}

func TestBackendsShowsWhyAndTheDefaultTeam(t *testing.T) {
	isolateBackends(t, "OPENAI_API_KEY="+cliPlantedKey+"\nANTHROPIC_API_KEY="+cliPlantedKey+"\n")
	out, code := cli(t, "backends")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"BACKEND", "openai", "OPENAI_API_KEY found in ./.env",
		"GOOGLE_API_KEY or GEMINI_API_KEY not set", "no server at http://127.0.0.1:", "codex is not on PATH; install it (npm install -g @openai/codex@0.171.0) or set CODEX_BIN",
		"sim           yes",
		"Default team: openai/gpt-5.4, claude/claude-opus-4-6",
		"Sandbox for agents' commands (run_command, stdio MCP servers): ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, cliPlantedKey) || strings.Contains(out, "PLANTED") {
		t.Fatalf("the key is printed:\n%s", out)
	}
}

func TestBackendsJSONWithoutKeysExplainsTheMissingTeam(t *testing.T) {
	isolateBackends(t, "")
	out, code := cli(t, "backends", "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var rep backendsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(rep.Backends) != len(providers.Backends()) || rep.DefaultTeam.Models == nil || len(rep.DefaultTeam.Models) != 0 {
		t.Fatalf("report %+v", rep)
	}
	if ok, why := sandbox.Probe(); rep.Sandbox.Available != ok || rep.Sandbox.Why != why {
		t.Errorf("sandbox %+v, the probe says %v %q", rep.Sandbox, ok, why)
	}
	for _, want := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", ".env", "sim/strong"} {
		if !strings.Contains(rep.DefaultTeam.Error, want) {
			t.Errorf("default-team error lacks %q: %s", want, rep.DefaultTeam.Error)
		}
	}
	out, _ = cli(t, "backends")
	if !strings.Contains(out, "Default team: none. The default team needs a key for one or more") {
		t.Errorf("text output:\n%s", out)
	}
}

func TestRunWithoutModelsUsesTheDefaultTeamOrSaysHowToGetOne(t *testing.T) {
	isolateBackends(t, "")
	out, code := cli(t, "run", "--state-dir", t.TempDir(), "What is 2 + 2?")
	if code == 0 || !strings.Contains(out, "sim/strong") || !strings.Contains(out, "OPENAI_API_KEY") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
