package cliagent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// setupEnv readies, for a sandboxed run, the variables of env that move
// where the CLI loads setup from out of its config directory
// (EnvPolicy.SetupPaths: Claude Code's plugin cache and seed directories),
// and returns env with them rewritten. Passed as the operator set them,
// they would name a place of the agent's: a leading ~ is HOME to the CLI,
// the agent's own, and a relative path is its workspace's, so a plugin the
// agent wrote there in one run would run in its next, its hooks unjudged;
// and an absolute path of the user's is not in the sandbox at all. Each
// path is read as the CLI reads it, ~ being the user's HOME home; each
// directory of the user's it names is bound read-only at that path (pinned,
// so it holds inside a writable bind too) and kept; a path naming none is
// left out, and a variable left with none is dropped, so the CLI falls back
// to its config directory's, which stageConfig shows read-only.
func setupEnv(c *Confinement, env, names []string, home string) []string {
	if len(names) == 0 {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			out = append(out, kv)
			continue
		}
		var kept []string
		for _, p := range filepath.SplitList(v) {
			if p = usersDir(p, home); p != "" {
				kept = append(kept, p)
				c.Pinned = append(c.Pinned, Bind{Src: p, Dst: p})
			}
		}
		if len(kept) > 0 {
			out = append(out, k+"="+strings.Join(kept, string(filepath.ListSeparator)))
		}
	}
	return out
}

// usersDir is the directory of the user's that p names as a CLI reads it
// (a leading ~ is HOME, home here), or "" when it names none: a relative
// path (the sandbox's working directory is the workspace), the root, or a
// path where the user has no directory (where the sandbox might show one
// of the agent's).
func usersDir(p, home string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return ""
		}
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		return ""
	}
	p = filepath.Clean(p)
	if st, err := os.Stat(p); p == "/" || err != nil || !st.IsDir() {
		return ""
	}
	return p
}
