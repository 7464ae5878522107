package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// gitTimeout bounds every git call: a hung repository (a lock, a network
// file system) must not hang a session's start.
const gitTimeout = 60 * time.Second

func git(dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", slices.Concat(gitOff, []string{"-C", dir}, args)...)
	cmd.Env = gitEnv() // gitsafe.go: the repository may name programs; they get no keys
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// gitFiles: when dir is the top of a git work tree with a commit, its HEAD
// and the files a workspace starts with (tracked and untracked, not ignored,
// not deleted).
func gitFiles(dir string) (commit string, files map[string]bool, ok bool) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", nil, false
	}
	top, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", nil, false
	}
	if t, err := filepath.EvalSymlinks(strings.TrimSpace(string(top))); err != nil || t != dir {
		return "", nil, false // a directory inside a repository: copied like any other
	}
	head, err := git(dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", nil, false // no commit yet
	}
	out, err := git(dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return "", nil, false
	}
	files = map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files[f] = true
		}
	}
	return strings.TrimSpace(string(head)), files, true
}

// worktreeAdds holds one lock per repository: git names each worktree's
// admin directory after the workspace's base name ("workspace",
// "workspace1", …) and two adds at once in one repository race on that name
// ("failed to read .git/worktrees/workspace37/commondir"), while the agents'
// first steps, which add them, run in parallel.
var worktreeAdds sync.Map // repository path -> *sync.Mutex

// lockWorktrees takes repo's worktree lock and returns its release.
func lockWorktrees(repo string) (unlock func()) {
	m, _ := worktreeAdds.LoadOrStore(repo, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// addWorktree gives an agent a git worktree of the repository at commit,
// detached, so its commits touch no branch of the user's.
//
// The worktree is added without its checkout, which then runs in the
// worktree itself (as worktree add runs it: reset --hard) with the filter
// drivers of that worktree's configuration emptied: a conditional include
// may give a linked worktree drivers the repository's own context lacks.
// A checkout that cannot finish (an object the repository lacks: a partial
// clone's, which gitEnv forbids fetching) or may not run (a driver -c
// cannot name) leaves the index alone read from commit; Prepare brings the
// files to the base's either way.
func addWorktree(repo, live, commit string) error {
	if err := os.MkdirAll(filepath.Dir(live), stateDirMode); err != nil {
		return err
	}
	defer lockWorktrees(repo)()
	if _, err := git(repo, "worktree", "add", "--no-checkout", "--detach", "--quiet", live, commit); err != nil {
		return fmt.Errorf("cannot give the workspace a git worktree of %s: %w", repo, err)
	}
	off, named, err := filtersOff(live)
	if err != nil {
		return fmt.Errorf("cannot list the filter drivers of %s, to turn them off: %w", repo, err)
	}
	if !named {
		err = errors.New("a filter driver's name holds an '='")
	} else {
		_, err = git(live, append(off, "reset", "--hard", "--quiet", "--no-recurse-submodules")...)
	}
	if err != nil {
		if _, rerr := git(live, "read-tree", commit); rerr != nil {
			return fmt.Errorf("cannot give the workspace a git worktree of %s: %w (and reading its index: %w)", repo, err, rerr)
		}
	}
	return nil
}

// ReleaseWorktrees unregisters the agents' worktrees from the write
// context's repository once a session has ended: each live workspace keeps
// its files, and the user's repository lists no stale worktree.
func (t *Team) ReleaseWorktrees(agents []string) error {
	c, ok := t.WriteContext()
	if !ok {
		return nil
	}
	if err := t.claim(); err != nil {
		return err
	}
	released := false
	for _, a := range agents {
		p := filepath.Join(t.Live(a), ".git")
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(p); err != nil {
				return err
			}
			released = true
		}
	}
	if !released {
		return nil
	}
	defer lockWorktrees(c.Path)()
	_, err := git(c.Path, "worktree", "prune")
	return err
}
