package pgstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAReplicasWorkspacePathsAreHiddenFromClients: an error about a file in
// a session's workspace on this replica (its state directory, a tenant's
// included) reads by the session and the path inside it, as on the file
// store. On this store the service knew no directory to hide, and a
// tenant read the replica's paths.
func TestAReplicasWorkspacePathsAreHiddenFromClients(t *testing.T) {
	work := t.TempDir()
	db, err := Open(context.Background(), pgtest.Schema(t), Options{WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	for _, tenant := range []string{coordination.DefaultTenant, "acme"} {
		st, err := db.For(tenant)
		if err != nil {
			t.Fatal(err)
		}
		svc := coordination.NewService(st, coordination.Options{RelativeDirs: true, Logger: zerolog.Nop()})
		file := filepath.Join(st.(*Store).WorkDir("team_x"), "agents", "agent_a", "workspace", "main.go")
		got := svc.HidePaths("open " + file + ": permission denied")
		if strings.Contains(got, work) || strings.Contains(got, "tenants") {
			t.Fatalf("tenant %s reads the replica's paths: %s", tenant, got)
		}
		if want := "open session team_x's agents/agent_a/workspace/main.go: permission denied"; got != want {
			t.Fatalf("tenant %s reads %q, want %q", tenant, got, want)
		}
	}
}
