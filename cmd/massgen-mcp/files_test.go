package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunBuildsTheBakerySiteOffline(t *testing.T) {
	dir := t.TempDir()
	out, code := cli(t, "run", "--state-dir", dir, "--models", "sim,sim,sim", "--seed", "1", "Build a one-page landing site for a bakery")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	i := strings.Index(out, "Files: 2 in ")
	if i < 0 {
		t.Fatalf("output does not say where the files are:\n%s", out)
	}
	filesDir := strings.TrimSpace(strings.SplitN(out[i+len("Files: 2 in "):], "\n", 2)[0])
	if !strings.HasPrefix(filesDir, filepath.Join(dir, "sessions")) {
		t.Fatalf("files dir %s is not in the state dir", filesDir)
	}
	if page, err := os.ReadFile(filepath.Join(filesDir, "index.html")); err != nil || !strings.Contains(string(page), "<h1>Bakery</h1>") {
		t.Fatalf("index.html: %v %s", err, page)
	}
}

// TestRunContextPathWriteWaitsForApply pins issue 28 item 3 in the CLI: a
// run with a write context lists the winner's changes and writes nothing;
// `massgen-mcp apply <id>` writes them, a second apply says they were
// already applied, and status shows the apply; run --apply writes them as
// the run ends.
func TestRunContextPathWriteWaitsForApply(t *testing.T) {
	state, proj := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("keep me"), 0o644)
	out, code := cli(t, "run", "--state-dir", state, "--models", "sim,sim", "--seed", "2", "--session-id", "site", "--context-path", proj+":write", "Build a one-page landing site for a bakery")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"Changes to " + proj + ", pending (nothing written yet): 2 files", "added   index.html (+", "massgen-mcp apply --state-dir " + shellQuote(state) + " site"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "index.html")); err == nil {
		t.Fatal("the run wrote to the project before apply")
	}
	out, code = cli(t, "apply", "--state-dir", state, "site")
	if code != 0 || !strings.Contains(out, "Applied to "+proj+": 2 written") || !strings.Contains(out, "added index.html") {
		t.Fatalf("apply: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(proj, "index.html")); err != nil {
		t.Fatal(err)
	}
	if out, code = cli(t, "apply", "--state-dir", state, "site"); code != 0 || !strings.Contains(out, "Already applied") {
		t.Fatalf("second apply: exit %d:\n%s", code, out)
	}
	if out, _ = cli(t, "status", "--state-dir", state, "site"); !strings.Contains(out, "Applied to "+proj+": 2 written") {
		t.Fatalf("status does not show the apply:\n%s", out)
	}

	auto := t.TempDir()
	out, code = cli(t, "run", "--state-dir", state, "--models", "sim,sim", "--seed", "2", "--apply", "--context-path", auto+":write", "Build a one-page landing site for a bakery")
	if code != 0 || !strings.Contains(out, "Applied to "+auto+": 2 written, 0 conflicts") {
		t.Fatalf("run --apply: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(auto, "index.html")); err != nil {
		t.Fatal(err)
	}
	if out, code := cli(t, "apply", "--state-dir", state, "team_nowhere"); code != 1 || !strings.Contains(out, "massgen-mcp sessions") {
		t.Fatalf("apply of a missing session: exit %d:\n%s", code, out)
	}
	if out, code := cli(t, "run", "--state-dir", state, "--models", "sim", "--context-path", filepath.Join(proj, "missing"), "x"); code != 1 || !strings.Contains(out, "missing") {
		t.Fatalf("a missing context directory is exit 1 naming it: %d %s", code, out)
	}
}

func TestTeamFileContext(t *testing.T) {
	state, proj := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a"), 0o644)
	cfg := filepath.Join(state, "team.yaml")
	os.WriteFile(cfg, []byte("agents:\n  - model: sim\n  - model: sim\ncontext:\n  - path: "+proj+"\n    permission: read\n"), 0o644)
	out, code := cli(t, "run", "--state-dir", state, "--config", cfg, "--seed", "1", "Build a one-page landing site for a bakery")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "Applied to") {
		t.Fatalf("a read context was written to:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(proj, "index.html")); err == nil {
		t.Fatal("a read context received the winner's files")
	}
}
