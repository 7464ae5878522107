package cliagent

import (
	"context"
	"os/exec"
)

// Sandbox confines a CLI run. The CLI needs its network (it must reach its
// API), its workspace writable, its per-agent HOME, and its run directory
// (configs and the workflow socket) writable; everything else it is given
// is read-only.
type Sandbox interface {
	// Command returns the command that runs argv as c says; Env is its
	// whole environment.
	Command(ctx context.Context, c Confinement, argv []string) (*exec.Cmd, error)
	// Paths says where the workspace and HOME appear to the CLI.
	Paths(c Confinement) (workspace, home string)
	// Confined says whether Command confines at all.
	Confined() bool
}

// Confinement is what one CLI run may see.
type Confinement struct {
	Workspace string // read-write, the working directory
	// WorkspaceReadOnly binds the workspace read-only (the read-only
	// permission role): the OS refuses the CLI's every write to it.
	WorkspaceReadOnly bool
	Home              string // read-write, HOME
	ReadOnly          []Bind // the binaries, peers' snapshots, contexts
	ReadWrite         []Bind // the run directory, the agent's private config directory
	Hide              []string
	Network           bool
	Env               []string
	// Pinned are read-only binds over paths inside the writable ones
	// (pinRunFiles): what decides the CLI's permissions, which it must
	// not rewrite. Plain cannot pin anything.
	Pinned []Bind
}

// Bind makes a host path visible at Dst inside the sandbox.
type Bind struct {
	Src, Dst string
}

// Plain runs CLIs unconfined, in their workspace, with the allow-listed
// environment only: for hosts where bubblewrap cannot run.
type Plain struct{}

func (Plain) Command(ctx context.Context, c Confinement, argv []string) (*exec.Cmd, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.Workspace
	cmd.Env = c.Env
	return cmd, nil
}

func (Plain) Paths(c Confinement) (string, string) { return c.Workspace, c.Home }

func (Plain) Confined() bool { return false }
