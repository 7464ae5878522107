package main

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/gcpolicy"
	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestEveryServiceTheBinaryBuildsFeedsTheIdleCollector: the services of run,
// of serve (file and memory stores) report their model calls to the idle
// collector, which the core no longer holds.
func TestEveryServiceTheBinaryBuildsFeedsTheIdleCollector(t *testing.T) {
	services := binaryServices(t)
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
