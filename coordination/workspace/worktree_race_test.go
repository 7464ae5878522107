package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Agents' steps run in parallel, and each agent's first step gives it a git
// worktree of the one write-context repository; every live workspace has
// the base name "workspace", so git picks each worktree's admin directory
// name (workspace, workspace1, …) while the others pick theirs. Concurrent
// adds in one repository failed now and then (a step failed, and the
// agent's next answer came without its files); they are taken one at a time.
func TestWorktreesAddedAtOnceInOneRepositoryAllSucceed(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	run := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", ".")
	run("commit", "-q", "-m", "first")
	commit := run("rev-parse", "HEAD")
	state := t.TempDir()
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				live := filepath.Join(state, strconv.Itoa(round), "agent_"+strconv.Itoa(i), "workspace")
				errs[i] = addWorktree(repo, live, commit)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, agent %d: %v", round, i, err)
			}
		}
	}
}
