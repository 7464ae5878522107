package pgstore

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestPoolsReportBothPools: a replica reports its main pool and its
// heartbeats' own, with their caps and the connections in them, for the
// operator's metrics.
func TestPoolsReportBothPools(t *testing.T) {
	a := replicas(t, 1)[0]
	if err := a.Create(context.Background(), storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	pools := a.Pools()
	if len(pools) != 2 || pools[0].Name != "main" || pools[1].Name != "beats" {
		t.Fatalf("pools %+v; want main and beats", pools)
	}
	for _, p := range pools {
		if p.Max <= 0 || p.Total < 1 || p.Total > p.Max || p.Acquired+p.Idle > p.Total {
			t.Errorf("pool %+v: want a cap, at least one connection open, and acquired and idle within the open ones", p)
		}
	}
	if pools[1].Max != beatConns {
		t.Errorf("the heartbeats' pool is capped at %d; want beatConns (%d)", pools[1].Max, beatConns)
	}
}
