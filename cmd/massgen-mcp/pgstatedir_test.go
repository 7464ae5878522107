package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestReplicasOnOneStateDirKeepTheirWorkspacesApart: a second and a third
// `serve --store postgres://…` on the --state-dir a running replica holds
// (two MCP clients' stdio servers in one project, each with ./.massgen)
// start, each keeping its copies of the workspaces in a directory of its
// own under it (replicas/2, replicas/3), held as the first holds its own:
// two replicas on one directory cleared and wrote each other's workspaces.
func TestReplicasOnOneStateDirKeepTheirWorkspacesApart(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	dir := t.TempDir()
	startServer(t, bin, dir, "--store", dsn)
	for _, n := range []string{"2", "3"} {
		s := startServer(t, bin, dir, "-v", "--store", dsn)
		want := filepath.Join(dir, "replicas", n)
		if log := s.stderr.String(); !strings.Contains(log, want) {
			t.Errorf("replica %s on the shared state directory does not say it works in %s:\n%s", n, want, log)
		}
	}
}
