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

func TestRunContextPathWriteAppliesTheWinnersChanges(t *testing.T) {
	state, proj := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("keep me"), 0o644)
	out, code := cli(t, "run", "--state-dir", state, "--models", "sim,sim", "--seed", "2", "--context-path", proj+":write", "Build a one-page landing site for a bakery")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "Applied to "+proj+": 2 written, 0 conflicts") || !strings.Contains(out, "added index.html") {
		t.Fatalf("output does not report what was applied:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(proj, "index.html")); err != nil {
		t.Fatal(err)
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
