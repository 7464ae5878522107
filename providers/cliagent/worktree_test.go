package cliagent

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A CLI agent's workspace in a session with a git write context is a
// worktree whose .git file names the repository's git dir by its host path,
// and the CLI sees the context at that path: git reads work in the sandbox.
// Nothing there may be written (a hook, a config line), or the server's next
// git call in the repository would run what an agent planted.
func TestInTheSandboxTheRepositorysGitDirIsReadOnlyThroughTheWorktree(t *testing.T) {
	sb := sandboxed(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "first")
	config, err := os.ReadFile(filepath.Join(repo, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, "gitdir", func(o *Options) { o.Sandbox = sb })
	h.ws = filepath.Join(t.TempDir(), "workspace")
	git("worktree", "add", "-q", "--detach", h.ws)
	req := h.request()
	req.Contexts = []providers.ContextDir{{Name: "proj", Path: repo}}
	act, _, err := h.step(req)
	if err != nil {
		t.Fatal(err)
	}
	if act.Text != "wrote nothing" {
		t.Fatalf("the sandboxed CLI: %q", act.Text)
	}
	if _, err := os.Lstat(filepath.Join(repo, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("a post-checkout hook was planted in the repository")
	}
	if now, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(now) != string(config) {
		t.Errorf("the repository's config changed:\n%s", now)
	}
}
