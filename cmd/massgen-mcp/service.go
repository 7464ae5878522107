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
	return coordination.NewService(filestore.New(abs), coordination.Options{
		Open:        backends.Open,
		DefaultTeam: backends.DefaultTeam,
		Backends:    backends.Config{}.Report,
		CheckModels: backends.CheckModels,
		Parallel:    parallel,
		Logger:      logger,
		StateDir:    abs,
		OnModelCall: gcpolicy.Busy,
		Tooling:     tooling.Builtin{},
		Reviews:     checkpoint.Reviews{},
	})
}
