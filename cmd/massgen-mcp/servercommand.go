package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/mcp/install"
)

// serverCommand is the command an entry for this scope runs, and a note
// for the output when that is not plainly this binary on PATH.
func serverCommand(scope string) (command, note string) {
	self, err := os.Executable()
	if err != nil {
		return "massgen-mcp", ""
	}
	self, _ = filepath.EvalSymlinks(self)
	onPath, err := exec.LookPath("massgen-mcp")
	if err == nil {
		onPath, err = filepath.EvalSymlinks(onPath)
	}
	if err != nil {
		onPath = ""
	}
	if strings.HasSuffix(filepath.Base(self), ".test") {
		return "massgen-mcp", "" // under go test
	}
	return chooseCommand(scope, self, onPath)
}

// chooseCommand picks between the bare name and this binary's absolute
// path, self, given the massgen-mcp PATH finds (onPath, "" for none). The
// bare name survives upgrades and moves, and a project's file is shared
// with the repository, where this machine's path means nothing: a project
// entry names massgen-mcp whenever PATH has one, even another build than
// this. A user's own config names this binary unless PATH finds this very
// one, so the entry runs what the user just ran. An absolute path is said.
func chooseCommand(scope, self, onPath string) (command, note string) {
	switch {
	case onPath == self:
		return "massgen-mcp", ""
	case scope == install.ScopeProject && onPath != "":
		return "massgen-mcp", fmt.Sprintf("the project's entry runs massgen-mcp from PATH (here %s, not this binary, %s), so it works for whoever opens the repository with massgen-mcp on PATH; --server-command names another command.", onPath, self)
	case scope == install.ScopeProject:
		return self, fmt.Sprintf("massgen-mcp is not on PATH, so the project's entry names this binary by its absolute path (%s), which only this machine has: put massgen-mcp on PATH and install again before you share the file, or name the command with --server-command.", self)
	case onPath != "":
		return self, fmt.Sprintf("the entry names this binary by its absolute path (%s), since the massgen-mcp on PATH (%s) is another one; install again if you move it.", self, onPath)
	}
	return self, fmt.Sprintf("massgen-mcp is not on PATH, so the entry names this binary by its absolute path (%s); install again if you move it.", self)
}
