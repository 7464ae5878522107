package main

import (
	"os"
	"path/filepath"
	"testing"
)

// status --watch ends with the exit code run gives the same session: a
// winner the team did not agree on (max_rounds) exits 7, and a degraded
// run 3, not 0 as if the team had agreed.
func TestStatusWatchExitsAsRunDoesForAnAnswerNotAgreedOn(t *testing.T) {
	dir := t.TempDir()
	answers := filepath.Join(dir, "answer.json")
	os.WriteFile(answers, []byte(`[{"action":"new_answer","content":"Answer: 391"}]`), 0o644)
	fails := filepath.Join(dir, "fails.json")
	os.WriteFile(fails, []byte(`[{"action":"error","content":"Prompt is too long"}]`), 0o644)
	for _, tc := range []struct {
		id     string
		models string
		code   int
	}{
		{"team_split", "sim/script:file=" + answers + ",sim/script:file=" + answers, exitSplitForced},
		{"team_degraded", "sim/script:file=" + fails + ",sim/strong", exitDegraded},
	} {
		out, code := cli(t, "run", "--plain", "--state-dir", dir, "--session-id", tc.id, "--models", tc.models, "--max-rounds", "1", "--seed", "1", "What is 17 * 23?")
		if code != tc.code {
			t.Fatalf("%s: run exit %d, want %d:\n%s", tc.id, code, tc.code, out)
		}
		for _, args := range [][]string{{"--plain"}, {"--json"}} {
			out, code := cli(t, append(append([]string{"status", "--watch"}, args...), "--state-dir", dir, tc.id)...)
			if code != tc.code {
				t.Errorf("%s: status --watch %v exit %d, run gave %d:\n%s", tc.id, args, code, tc.code, out)
			}
		}
	}
}
