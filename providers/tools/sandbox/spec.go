package sandbox

import "time"

// Bind is a host directory (or file) made visible inside the sandbox.
type Bind struct {
	Src string // host path
	Dst string // absolute path inside the sandbox
}

// Spec says what a sandboxed process may see.
type Spec struct {
	// Workspace is bound read-write at /workspace and is the working
	// directory; "" runs in / with no workspace.
	Workspace string
	// WorkspaceReadOnly binds the workspace read-only: with no ReadWrite
	// binds and no Home, nothing is writable but the scratch /tmp and HOME
	// that vanish with the sandbox (the read-only permission role).
	WorkspaceReadOnly bool
	// ReadOnly binds contexts (/context/<name>), peers' files
	// (/peers/agentN: a tree of CopyTree, whose path names no agent, never
	// the snapshot itself) and tool installs. Files named .env or .env.* under
	// them are hidden.
	ReadOnly []Bind
	// ReadWrite binds extra writable places (a CLI agent's own HOME, say).
	ReadWrite []Bind
	// Pinned are read-only binds mounted after every other one, so they
	// may sit inside a writable bind: a file there stays as the caller
	// wrote it, and, being a mount point, cannot be removed or renamed
	// over (EBUSY) either (a CLI agent's permission settings in its
	// writable run directory).
	Pinned []Bind
	// Home, when set, is bound read-write as HOME (/home/agent); "" makes
	// HOME an empty tmpfs.
	Home string
	// Hide lists host paths that must not be visible even where a bind
	// would show them (the state directory, a tokens file).
	Hide []string
	// Network shares the host's network namespace, loopback services
	// included; without it the sandbox has no network at all.
	Network bool
	// Env holds extra KEY=VALUE variables, set after PATH, LANG, HOME and
	// TMPDIR (so a PATH here replaces the default one). Nothing else of the
	// caller's environment reaches the process.
	Env []string
	// Unsandboxed runs the command plainly (the operator's `sandbox: none`):
	// in Workspace, with the same allow-listed environment, but seeing the
	// whole host. Callers warn when they use it.
	Unsandboxed bool
}

// Limits bound one Run.
type Limits struct {
	Timeout   time.Duration // 0: DefaultTimeout
	OutputCap int           // bytes of combined stdout and stderr kept; 0: DefaultOutputCap
}

// Defaults for a zero Limits.
const (
	DefaultTimeout   = 2 * time.Minute
	DefaultOutputCap = 64 << 10
)

// Result is what a finished Run reports.
type Result struct {
	// Output is stdout and stderr interleaved as written. Past OutputCap
	// its head and tail are kept with a marker between them, since a test
	// run's summary is at its end.
	Output    string
	ExitCode  int // -1 when killed
	TimedOut  bool
	Truncated bool
	Duration  time.Duration
}

// Paths inside the sandbox.
const (
	WorkspaceDir = "/workspace"
	HomeDir      = "/home/agent"
)

// ContextDir is where a context named name is bound.
func ContextDir(name string) string { return "/context/" + name }

// PeerDir is where an anonymous peer's snapshot (agentN) is bound.
func PeerDir(anon string) string { return "/peers/" + anon }
