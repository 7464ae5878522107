package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestRunApplysHeldHintPastes: run --apply on a winner that changed a CI
// workflow and a plain file writes nothing, and the commands its To fix
// line prints — the session's own id and --state-dir — run when pasted
// into a shell: the skip-config one writes the plain file only.
func TestRunApplysHeldHintPastes(t *testing.T) {
	bin := binary(t)
	files := []providers.AnswerFile{
		{Path: ".github/workflows/ci.yml", Content: "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n"},
		{Path: "hello.txt", Content: "hello\n"},
	}
	script := fake.NewScript()
	for range 3 {
		script.Add("gpt-5-mini", fake.Reply{Kind: fake.ReplyNewAnswer, Content: "Added CI and hello.", Files: files})
	}
	srv := httptest.NewServer(fake.NewAll(script))
	defer srv.Close()

	// The pasted command finds massgen-mcp on PATH, as a user's would.
	onPath := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(onPath, "massgen-mcp")); err != nil {
		t.Fatal(err)
	}
	state, proj, home := filepath.Join(t.TempDir(), "state dir"), t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + onPath + string(os.PathListSeparator) + os.Getenv("PATH"),
		"OPENAI_API_KEY=" + plantedKeys["OPENAI_API_KEY"], "OPENAI_BASE_URL=" + fake.BaseURLs(srv.URL)["OPENAI_BASE_URL"]}
	cmd := exec.Command(bin, "run", "--plain", "--apply", "--state-dir", state, "--seed", "1",
		"--models", "openai/gpt-5-mini,openai/gpt-5-mini,openai/gpt-5-mini", "--context-path", proj+":write", "Add a CI workflow and hello.txt")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("run --apply applied tool configuration unasked:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(proj, "hello.txt")); err == nil {
		t.Fatalf("run --apply wrote hello.txt though the change was held")
	}
	fix := stderr.String()
	if strings.Contains(fix, "<session-id>") {
		t.Errorf("the To fix line names <session-id>, which does not paste:\n%s", fix)
	}
	skip := regexp.MustCompile(`massgen-mcp apply --skip-config [^\n]*? team_\w+`).FindString(fix)
	if skip == "" {
		t.Fatalf("no pasteable skip-config command in:\n%s", fix)
	}
	paste := exec.Command("sh", "-c", skip)
	paste.Env = env
	if out, err := paste.CombinedOutput(); err != nil {
		t.Fatalf("pasted %q: %v\n%s", skip, err, out)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt after the pasted skip-config: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(proj, ".github", "workflows", "ci.yml")); err == nil {
		t.Errorf("skip-config wrote the workflow")
	}
}
