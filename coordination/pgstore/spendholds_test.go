package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAnExpiredHoldIsDeletedByTheNextHoldWrite: a criteria call's hold
// whose holder died stops counting at its expiry; its row goes with the
// next hold written on the session (the write's own statement), or with
// a let-go there, or with the tenant's collection, and a live hold stays.
// Before, an expired row stayed until its session was deleted.
func TestAnExpiredHoldIsDeletedByTheNextHoldWrite(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	for _, id := range []string{"held", "let-go", "collected"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.HoldSpend(ctx, id, "hold:dead", 0.34, 8500, time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.HoldSpend(ctx, "held", "hold:live", 0.10, 100, time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	rows := func(id string) []string {
		t.Helper()
		r, err := a.db.pool.Query(ctx, `SELECT holder FROM spend_holds WHERE tenant = $1 AND session_id = $2 ORDER BY holder`, a.tenant, id)
		if err != nil {
			t.Fatal(err)
		}
		out, err := collectStrings(r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if _, err := a.HoldSpend(ctx, "held", "hold:next", 0.10, 100, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := rows("held"); len(got) != 2 || got[0] != "hold:live" || got[1] != "hold:next" {
		t.Errorf("after the next hold write, session held keeps holds %v; want the expired one gone [hold:live hold:next]", got)
	}
	if err := a.LetGoSpend(ctx, "let-go", "hold:other"); err != nil {
		t.Fatal(err)
	}
	if got := rows("let-go"); len(got) != 0 {
		t.Errorf("after a let-go on the session, it keeps holds %v; want the expired one gone", got)
	}
	if _, err := a.CollectGarbage(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := rows("collected"); len(got) != 0 {
		t.Errorf("after the tenant's collection, session collected keeps holds %v; want the expired one gone", got)
	}
	if got := rows("held"); len(got) != 2 {
		t.Errorf("after the tenant's collection, session held keeps holds %v; want its two live ones", got)
	}
}
