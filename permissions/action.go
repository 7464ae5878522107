package permissions

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Kind is what sort of action an agent takes.
type Kind string

// The kinds of action.
const (
	Read    Kind = "read"    // Target: a path (relative: in the workspace)
	Write   Kind = "write"   // Target: a path (relative: in the workspace)
	Exec    Kind = "exec"    // Target: the command line as given
	Net     Kind = "net"     // Target: a host, or "web_search"
	MCP     Kind = "mcp"     // Target: server/tool
	Git     Kind = "git"     // Target: the subcommand and its arguments, "push origin main"
	Publish Kind = "publish" // Target: what publishes, "npm", "cargo", "docker push image"
)

// Kinds lists every kind, in the order Coarse reports them.
var Kinds = []Kind{Read, Write, Exec, Net, MCP, Git, Publish}

func (k Kind) valid() bool {
	for _, x := range Kinds {
		if k == x {
			return true
		}
	}
	return false
}

// Action is one thing an agent is about to do: kind(target).
type Action struct {
	Kind   Kind   `json:"kind"`
	Target string `json:"target"`
}

// String is the action as rules and the audit write it: exec(go test ./...).
func (a Action) String() string { return string(a.Kind) + "(" + a.Target + ")" }

// InWorkspace tells whether a read or write stays in the agent's workspace:
// its target is a relative path that does not climb out with "..".
func (a Action) InWorkspace() bool {
	if a.Kind != Read && a.Kind != Write {
		return false
	}
	return inWorkspace(a.Target)
}

func inWorkspace(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, unknownDir) {
		return false
	}
	c := path.Clean(p)
	return c != ".." && !strings.HasPrefix(c, "../")
}

// PathIn names a path for a read or write action: a path under workspace
// (an absolute directory) becomes relative to it, so a CLI that reports
// absolute paths and a tool that takes relative ones decide alike. The
// toolbox's own spellings of the workspace (workspace/…, /workspace/…) are
// relative too. The name is the toolbox's (blanks around it trimmed, one
// leading ./ dropped, the place cut) made clean, so ./x, a/../x and
// workspace/./x are the x a rule names, and a path that climbs out keeps
// its leading "..".
func PathIn(p, workspace string) string {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "/") {
		p = path.Clean(p)
		ws := strings.TrimSuffix(path.Clean("/"+workspace), "/")
		switch {
		case workspace != "" && ws != "" && (p == ws || strings.HasPrefix(p, ws+"/")):
			return cleanRel(strings.TrimPrefix(p, ws))
		case p == "/workspace" || strings.HasPrefix(p, "/workspace/"):
			return cleanRel(strings.TrimPrefix(p, "/workspace"))
		}
		return p
	}
	rel := strings.TrimPrefix(p, "./")
	if rel == "workspace" || strings.HasPrefix(rel, "workspace/") {
		rel = strings.TrimPrefix(rel, "workspace")
	}
	return cleanRel(rel)
}

// cleanRel is a path in the workspace, clean: "." for the workspace itself.
func cleanRel(rel string) string { return path.Clean(strings.TrimPrefix(rel, "/")) }

// shellPaths are the paths a command's write to p names: p made clean, and
// under the sandbox's /workspace also relative to it, which a rule names
// (under sandbox: none /workspace is the host's, so the absolute name stays
// too, and the stricter of the two decides).
func shellPaths(p string) []string {
	if strings.HasPrefix(p, unknownDir) {
		return []string{p} // cleaning it would let a .. eat the unknown directory
	}
	if !strings.HasPrefix(p, "/") {
		return []string{path.Clean(p)}
	}
	c := path.Clean(p)
	if c == "/workspace" || strings.HasPrefix(c, "/workspace/") {
		return []string{c, cleanRel(strings.TrimPrefix(c, "/workspace"))}
	}
	return []string{c}
}

// ParseAction reads an action as String writes it: kind(target).
func ParseAction(s string) (Action, error) {
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return Action{}, fmt.Errorf("action %q is not kind(target), e.g. exec(go test ./...)", s)
	}
	k := Kind(strings.TrimSpace(s[:open]))
	if !k.valid() {
		return Action{}, fmt.Errorf("action %q has kind %q; kinds are read, write, exec, net, mcp, git, publish", s, k)
	}
	return Action{Kind: k, Target: s[open+1 : len(s)-1]}, nil
}

// Sandboxed are a command's actions as it runs in the sandbox, where
// /workspace is the workspace and /tmp is scratch that vanishes with the
// sandbox (TMPDIR=/tmp): a write to /workspace/… is dropped, its relative
// name (which shellPaths also gives) standing for it, and so is a write
// under /tmp, so neither is asked as a write outside. Unconfined (sandbox:
// none) both are the host's, so the actions ForCommand gives stand.
//
// bound are host directories the sandbox binds writable at their own
// paths (a CLI's step directory, which holds its hook settings, and its
// TMPDIR, which may lie under /tmp): a write to one, under one or over one
// (rm -rf /tmp) is the host's, so it stands.
func Sandboxed(actions []Action, bound ...string) []Action {
	return slices.DeleteFunc(slices.Clone(actions), func(a Action) bool {
		if a.Kind != Write {
			return false
		}
		t := strings.TrimSuffix(a.Target, "/*")
		for _, b := range bound {
			b = path.Clean(b)
			if t == b || strings.HasPrefix(t, b+"/") || strings.HasPrefix(b, t+"/") {
				return false
			}
		}
		for _, dir := range []string{"/workspace", "/tmp"} {
			if a.Target == dir || strings.HasPrefix(a.Target, dir+"/") {
				return true
			}
		}
		return false
	})
}
