package main

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
)

// TestEveryServiceTheBinaryBuildsOffersReviews: checkpoint reviews are
// passed to each service (Options.Reviews), not installed by linking
// coordination/checkpoint, so every service the binary builds — run's,
// serve's on either store, another tenant's — must be given them: each runs
// a checkpoint to its verdict.
func TestEveryServiceTheBinaryBuildsOffersReviews(t *testing.T) {
	served := func(f serveFlags, stores coordination.Stores, tenant string) *coordination.Service {
		svc, err := servedService(f, stores, tenant, nil)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	services := map[string]*coordination.Service{
		"run":            newService(t.TempDir(), 1),
		"serve":          served(serveFlags{stateDir: t.TempDir(), parallel: 1}, filestore.NewStores(t.TempDir()), mcp.DefaultTenant),
		"serve --memory": served(serveFlags{memory: true, parallel: 1}, memstore.NewStores(), mcp.DefaultTenant),
		"a tenant":       served(serveFlags{memory: true, parallel: 1}, memstore.NewStores(), "acme"),
	}
	seed := int64(5)
	for name, svc := range services {
		res, err := checkpoint.Run(context.Background(), svc, checkpoint.Spec{
			Objective: "Drop the legacy_orders table from the production database.",
			Models:    []string{"sim", "sim"}, Seed: &seed,
		}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Verdict == nil {
			t.Errorf("%s: the checkpoint ended %s without a verdict", name, res.Status)
		}
	}
}
