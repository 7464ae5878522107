package workspace

import (
	"errors"
	"os"
	"os/exec"
	"strings"
)

// The server runs git in the user's repository (a write context), whose
// configuration can name programs for git to run: hooks (worktree add runs
// post-checkout and reference-transaction), core.fsmonitor (any command
// that reads the index), filter drivers (checkout's smudge). Whoever wrote
// that configuration — the user, a tool the user installed, an agent that
// ran unsandboxed — must not get the server's environment, which holds the
// providers' keys, so git gets only the variables below, and the programs
// it would run are turned off as far as git lets them be. What remains runs
// with that environment only: a partial clone's checkout fetches the
// objects it lacks through the transport its configuration names (ssh, a
// credential helper), as it must to give the worktree its files.

// gitEnvKeep are the variables git itself needs: PATH, TMPDIR, LANG (and
// LC_*), and the HOME and XDG_CONFIG_HOME where the user's global
// configuration lives (its core.excludesFile decides which files a
// workspace starts with, its safe.directory whether git works in the
// repository at all; no call here commits, so no identity is needed). No
// GIT_* of the server's passes: a GIT_DIR or GIT_CONFIG_PARAMETERS would
// change what every call means.
var gitEnvKeep = map[string]bool{"PATH": true, "HOME": true, "XDG_CONFIG_HOME": true, "LANG": true, "TMPDIR": true}

// gitEnv is the whole environment of a server-side git call.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if gitEnvKeep[k] || strings.HasPrefix(k, "LC_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
}

// gitOff goes before every server-side git command: no pager, no hook
// (they are looked for under /dev/null, where none can be; the command
// line's core.hooksPath wins over the repository's), no fsmonitor. git
// hands -c settings on to the git processes it starts (worktree add's
// checkout is one).
var gitOff = []string{"--no-pager", "-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false"}

// filtersOff empties every filter driver repo's configuration defines, in
// any scope, for a checkout: git has no switch that turns filters off, so
// each is named. A file a filter would have smudged is checked out as
// committed; Prepare then brings the worktree to the base's content, which
// is the user's files as they are, so the workspace is the same.
func filtersOff(repo string) ([]string, error) {
	out, err := git(repo, "config", "-z", "--name-only", "--get-regexp", `^filter\.`)
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			return nil, nil // none defined
		}
		return nil, err
	}
	var args []string
	seen := map[string]bool{}
	for _, name := range strings.Split(string(out), "\x00") {
		i, j := strings.Index(name, "."), strings.LastIndex(name, ".")
		if i < 0 || j <= i {
			continue // filter.<name>.<key> only
		}
		driver := name[i+1 : j]
		if seen[driver] {
			continue
		}
		seen[driver] = true
		for _, kv := range []string{"smudge=", "clean=", "process=", "required=false"} {
			args = append(args, "-c", "filter."+driver+"."+kv)
		}
	}
	return args, nil
}
