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
// with that environment only. No call fetches: every transport is refused
// (GIT_ALLOW_PROTOCOL), and with it the programs a fetch would run (a remote's
// upload-pack, core.sshCommand, a credential helper, core.gitProxy); a
// partial clone's checkout that lacks an object stops there (addWorktree).

// gitEnvKeep are the variables git itself needs: PATH, TMPDIR, LANG (and
// LC_*), and the HOME and XDG_CONFIG_HOME where the user's global
// configuration lives (its core.excludesFile decides which files a
// workspace starts with, its safe.directory whether git works in the
// repository at all; no call here commits, so no identity is needed), and
// GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM and GIT_CONFIG_NOSYSTEM, which say
// where that configuration lives when it was moved (a safe.directory kept
// there, lost, made git refuse the repository and the workspace a copy).
// No other GIT_* of the server's passes: a GIT_DIR or
// GIT_CONFIG_PARAMETERS would change what every call means.
var gitEnvKeep = map[string]bool{"PATH": true, "HOME": true, "XDG_CONFIG_HOME": true, "LANG": true, "TMPDIR": true,
	"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_NOSYSTEM": true}

// gitEnv is the whole environment of a server-side git call.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if gitEnvKeep[k] || strings.HasPrefix(k, "LC_") {
			env = append(env, kv)
		}
	}
	// GIT_NO_LAZY_FETCH (git 2.39.4 and 2.45.1 on) refuses a promisor's
	// fetch before any transport is chosen; GIT_ALLOW_PROTOCOL, naming no
	// protocol, refuses every transport whatever the configuration allows
	// (a repository's protocol.<name>.allow wins over protocol.allow, even
	// on the command line).
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1", "GIT_ALLOW_PROTOCOL=none")
}

// gitOff goes before every server-side git command: no pager, no hook
// (they are looked for under /dev/null, where none can be; the command
// line's core.hooksPath wins over the repository's), no fsmonitor. git
// hands -c settings on to the git processes it starts. (Transports are
// gitEnv's: a -c protocol.allow loses to the repository's own policy for
// a protocol.)
var gitOff = []string{"--no-pager", "-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false"}

// filtersOff empties every filter driver the configuration of the worktree
// at dir defines, in any scope, for its checkout: git has no switch that
// turns filters off, so each is named. A file a filter would have smudged
// is checked out as committed; Prepare then brings the worktree to the
// base's content, which is the user's files as they are, so the workspace
// is the same. named is false when a driver's name holds an '=': -c splits
// its setting at the first one, and would leave that driver as it is (git
// 2.31's GIT_CONFIG_KEY_n could name it, older ones nothing), so no
// checkout is to run.
func filtersOff(dir string) (args []string, named bool, err error) {
	out, err := git(dir, "config", "-z", "--name-only", "--get-regexp", `^filter\.`)
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			return nil, true, nil // none defined
		}
		return nil, false, err
	}
	seen := map[string]bool{}
	for _, name := range strings.Split(string(out), "\x00") {
		i, j := strings.Index(name, "."), strings.LastIndex(name, ".")
		if i < 0 || j <= i {
			continue // filter.<name>.<key> only
		}
		driver := name[i+1 : j]
		if strings.Contains(driver, "=") {
			return nil, false, nil
		}
		if seen[driver] {
			continue
		}
		seen[driver] = true
		for _, kv := range []string{"smudge=", "clean=", "process=", "required=false"} {
			args = append(args, "-c", "filter."+driver+"."+kv)
		}
	}
	return args, true, nil
}
