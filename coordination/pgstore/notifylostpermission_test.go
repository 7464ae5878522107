package pgstore

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestAPermissionDecisionWithItsAnswerLostIsHeardByTheOtherReplicas: a
// permission decision commits, then notifies (notifyCommitted); one whose
// connection was lost after its statement reached the server committed
// unheard, and its caller (the guard's audit) was told the database was
// unavailable and only logs it: nobody retries a record. The other
// replicas must hear of it all the same, or their views of the session's
// permissions miss it until its next change.
func TestAPermissionDecisionWithItsAnswerLostIsHeardByTheOtherReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	changes, err := a.Watch(wctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	const agent = "agent-whose-record-was-lost"
	armed := &atomic.Bool{}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutOnce{cutAfter: &cutAfter{Conn: c, mark: []byte(agent), committed: func() bool { return rows(t, a, "permission_log") > 0 }}, armed: armed}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	cut := &Store{db: newDB(pool, a.db.channel, Options{}), tenant: a.tenant}

	rec := permissions.Record{Time: time.Now(), Agent: agent, Tool: "run_command", Action: permissions.Action{Kind: permissions.Exec, Target: "go test ./..."},
		Risk: permissions.RiskLocal, Verdict: permissions.Allow, Rule: "role workspace", Outcome: permissions.Allowed}
	armed.Store(true)
	if err := cut.AppendPermission(ctx, "s", rec); !unavailable(err) {
		t.Fatalf("a decision whose connection was lost after its statement = %v; want the database unavailable", err)
	}
	if armed.Load() {
		t.Fatal("the decision's statement never carried its agent, so nothing was cut, which tests nothing")
	}
	if n := rows(t, a, "permission_log"); n != 1 {
		t.Fatalf("%d decisions stored after the cut one, want 1 (its statement ran)", n)
	}
	deadline := time.After(heardWithin)
	for {
		select {
		case c := <-changes:
			if c.Permissions {
				return
			}
		case <-deadline:
			t.Fatalf("the other replica did not hear within %v of a decision committed with its answer lost (no NOTIFY was sent for it)", heardWithin)
		}
	}
}
