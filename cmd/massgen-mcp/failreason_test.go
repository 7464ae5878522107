package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Every line a person follows a run by — run's own lines and status --watch
// on another terminal — says why a step failed, on that one line, masked and
// cut: not only its class, and not the CLI's whole stderr.
func TestEveryLineOfARunSaysWhyAStepFailed(t *testing.T) {
	dir := t.TempDir()
	why := "claude exited with status 1 (sent sk-dummy-PLANTED-not-a-key-0000)\n" + strings.Repeat("stderr noise ", 60) + "\nPrompt is too long"
	script, _ := json.Marshal([]map[string]string{{"action": "error", "content": why}})
	fails := filepath.Join(dir, "fails.json")
	if err := os.WriteFile(fails, script, 0o644); err != nil {
		t.Fatal(err)
	}
	run, _ := cli(t, "run", "--plain", "--state-dir", dir, "--session-id", "team_why", "--models", "sim/script:file="+fails+",sim/strong", "--max-rounds", "1", "--seed", "1", "What is 17 * 23?")
	watch, _ := cli(t, "status", "--watch", "--plain", "--state-dir", dir, "team_why")
	for name, out := range map[string]string{"run": run, "status --watch": watch} {
		if strings.Contains(out, "sk-dummy") {
			t.Errorf("%s shows a key:\n%s", name, out)
		}
		n := 0
		for _, line := range strings.Split(out, "\n") {
			_, reason, ok := strings.Cut(line, "failed (provider): ")
			if !ok {
				continue
			}
			n++
			if !strings.HasSuffix(reason, "Prompt is too long") || len([]rune(reason)) > coordination.ReasonRunes {
				t.Errorf("%s: a failure's line does not end with its reason cut to %d runes: %q", name, coordination.ReasonRunes, line)
			}
		}
		if n == 0 {
			t.Errorf("%s has no failure line:\n%s", name, out)
		}
	}
}
