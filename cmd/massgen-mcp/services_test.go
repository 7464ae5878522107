package main

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
)

// binaryServices are the services the binary builds that run steps, by
// name: run's, serve's on either store, and another tenant's. The tests that
// every one is given a hook (tools, reviews) range over them.
func binaryServices(t *testing.T) map[string]*coordination.Service {
	t.Helper()
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
		"serve, tenant":  served(serveFlags{stateDir: t.TempDir(), parallel: 1}, filestore.NewStores(t.TempDir()), "team_b"),
	}
	// Before the temporary directories go (cleanups run last first): a
	// running session's status.json is written in the background after
	// the step that queued it returned.
	t.Cleanup(func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			pending := 0
			for _, svc := range services {
				pending += svc.StatusWritesPending()
			}
			if pending == 0 {
				return
			}
		}
	})
	return services
}
