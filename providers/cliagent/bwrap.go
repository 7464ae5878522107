package cliagent

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// Bubblewrap runs CLIs inside the sandbox of providers/tools/sandbox, the
// same one agents' commands run in: no capabilities, an unprivileged uid,
// the system read-only, the workspace at /workspace and the per-agent HOME
// at /home/agent the only writable places besides the run directory, its
// TMPDIR, where the run's view, socket and generated settings are pinned
// read-only, as the user's setup is in the agent's private config directory
// (configdir.go); the network shared (the CLI
// must reach its API). bwrap's PID namespace takes every process the CLI
// started with it.
type Bubblewrap struct{}

// Command implements Sandbox.
func (Bubblewrap) Command(ctx context.Context, c Confinement, argv []string) (*exec.Cmd, error) {
	spec := sandbox.Spec{Workspace: c.Workspace, WorkspaceReadOnly: c.WorkspaceReadOnly, Home: c.Home, Network: c.Network, Env: c.Env, Hide: c.Hide}
	add := func(to *[]sandbox.Bind, binds []Bind) {
		seen := map[string]bool{}
		for _, b := range binds {
			// The system directories are visible read-only already (and
			// cannot be bound over); a path given twice in a kind is bound
			// once. Across kinds both are: the sandbox mounts pinned binds
			// last, so a read-only one covers a writable one at its place,
			// which dropping it would leave the agent's to write.
			if systemPath(b.Src) || seen[b.Dst] {
				continue
			}
			seen[b.Dst] = true
			*to = append(*to, sandbox.Bind{Src: b.Src, Dst: b.Dst})
		}
	}
	add(&spec.ReadWrite, c.ReadWrite)
	add(&spec.ReadOnly, c.ReadOnly)
	add(&spec.Pinned, c.Pinned)
	return sandbox.Command(ctx, spec, argv)
}

// Paths implements Sandbox.
func (Bubblewrap) Paths(Confinement) (string, string) { return sandbox.WorkspaceDir, sandbox.HomeDir }

// Confined implements Sandbox.
func (Bubblewrap) Confined() bool { return true }

// systemPath tells a path the sandbox shows read-only anyway.
func systemPath(p string) bool {
	p = filepath.Clean(p)
	for _, d := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// DefaultSandbox is the sandbox CLIs run in by default: bubblewrap where it
// works here (sandbox.Probe), else Plain.
func DefaultSandbox() Sandbox {
	if ok, _ := sandbox.Probe(); ok {
		return Bubblewrap{}
	}
	return Plain{}
}

// SandboxStatus says in a sentence how CLIs run here.
func SandboxStatus() string {
	ok, why := sandbox.Probe()
	if ok {
		return "runs inside the bwrap sandbox"
	}
	return "runs unsandboxed: " + why
}
