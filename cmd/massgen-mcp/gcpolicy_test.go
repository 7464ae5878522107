package main

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/gcpolicy"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
)

// TestEveryServiceTheBinaryBuildsFeedsTheIdleCollector: the services of run,
// of serve (file and memory stores) report their model calls to the idle
// collector, which the core no longer holds.
func TestEveryServiceTheBinaryBuildsFeedsTheIdleCollector(t *testing.T) {
	served := func(f serveFlags, stores coordination.Stores) *coordination.Service {
		svc, err := servedService(f, stores, mcp.DefaultTenant, nil)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	services := map[string]*coordination.Service{
		"run":            newService(t.TempDir(), 1),
		"serve":          served(serveFlags{stateDir: t.TempDir(), parallel: 1}, filestore.NewStores(t.TempDir())),
		"serve --memory": served(serveFlags{memory: true, parallel: 1}, memstore.NewStores()),
	}
	ctx := context.Background()
	for name, svc := range services {
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong", "sim"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		before := gcpolicy.BusyCalls()
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.Agents[0].ID}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := gcpolicy.BusyCalls() - before; n < 2 {
			t.Errorf("%s: a server step called the idle collector's hook %d times, want at least 2 (out and back)", name, n)
		}
	}
}
