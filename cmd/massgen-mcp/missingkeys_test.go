package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run names every key the team lacks in one refusal, before it writes or
// calls anything, so a user sets them all in one go.
func TestARunNamesEveryMissingKeyAtOnce(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no ~/.env of the machine's
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	out, code := cli(t, "run", "--plain", "--state-dir", dir, "--models", "openai/gpt-5.4,claude/claude-haiku-4-5,sim", "What is 2+2?")
	if code != exitBadInput {
		t.Errorf("exit %d, want %d:\n%s", code, exitBadInput, out)
	}
	for _, want := range []string{"2 agents have no key here", "agent agent_a (openai/gpt-5.4): openai needs an API key: set OPENAI_API_KEY",
		"agent agent_b (claude/claude-haiku-4-5): claude needs an API key: set ANTHROPIC_API_KEY"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, out)
		}
	}
	if sessions, _ := os.ReadDir(filepath.Join(dir, "sessions")); len(sessions) > 0 {
		t.Errorf("a refused run wrote %d sessions", len(sessions))
	}
}
