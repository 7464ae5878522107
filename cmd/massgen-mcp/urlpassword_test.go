package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A base URL may carry a password (http://user:PASSWORD@proxy/v1, a basic
// auth proxy in front of a local model): it is a credential, and no command
// prints it — not config check's agent list, not run's "Session …: agent_a=…"
// line, not status's agent table. backends already shows such a URL
// redacted (url.Redacted).
func TestNoCommandPrintsThePasswordInABaseURL(t *testing.T) {
	const password = "sk-test-dummy-not-a-key-URLPW"
	dir := t.TempDir()
	team := filepath.Join(dir, "team.yaml")
	os.WriteFile(team, []byte("agents:\n  - id: a\n    backend:\n      type: vllm\n      model: llama\n      base_url: http://user:"+password+"@127.0.0.1:9/v1\n"), 0o644)
	if out, _ := cli(t, "config", "check", team); strings.Contains(out, password) {
		t.Errorf("config check printed the base URL's password:\n%s", out)
	}
	out, _ := cli(t, "run", "--plain", "--state-dir", dir, "--session-id", "team_pw", "--timeout", "5", "--max-rounds", "1",
		"--models", "vllm/llama@http://user:"+password+"@127.0.0.1:9/v1,sim", "hi")
	if strings.Contains(out, password) {
		t.Errorf("run printed the base URL's password:\n%s", out)
	}
	if out, _ := cli(t, "status", "--state-dir", dir, "team_pw"); strings.Contains(out, password) {
		t.Errorf("status printed the base URL's password:\n%s", out)
	}
}
