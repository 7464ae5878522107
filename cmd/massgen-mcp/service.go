package main

import (
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/gcpolicy"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// stateDir resolves --state-dir, then MASSGEN_STATE_DIR, then ./.massgen.
func stateDir(flag string) string {
	switch {
	case flag != "":
		return flag
	case os.Getenv("MASSGEN_STATE_DIR") != "":
		return os.Getenv("MASSGEN_STATE_DIR")
	}
	return ".massgen"
}

// newService wires the file store, every backend and checkpoint reviews
// into a service.
func newService(dir string, parallel int) *coordination.Service {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	opts := withHooks(coordination.Options{
		Open:        backends.Open,
		DefaultTeam: backends.DefaultTeam,
		Backends:    backends.Config{}.Report,
		CheckModels: backends.CheckModels,
		Parallel:    parallel,
		StateDir:    abs,
	})
	return coordination.NewService(filestore.New(abs), opts)
}

// withHooks adds what every service that runs steps is given, wherever the
// binary builds it (run, serve on either store, every tenant): the logger,
// the collector's activity hook, the agents' tools (and the operator's
// MASSGEN_WORKSPACE_TOOLS) and checkpoint reviews.
// One place, so a new hook cannot reach some services and miss others
// (TestEveryServiceTheBinaryBuildsHasTheTools, …OffersReviews).
func withHooks(opts coordination.Options) coordination.Options {
	opts.Logger = logger
	opts.OnModelCall = gcpolicy.Busy
	opts.Tooling = tooling.Builtin{}
	opts.Reviews = checkpoint.Reviews{}
	// The operator's word on the workspace tools (auto, on, off; a bad
	// value refuses every new session, naming it): an environment variable,
	// so it reaches run, serve and every tenant alike.
	opts.WorkspaceTools = os.Getenv("MASSGEN_WORKSPACE_TOOLS")
	return opts
}
