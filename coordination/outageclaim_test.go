package coordination_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestARunWhoseLeaseWasClaimedDuringAnOutageStartsNoStep: the store is
// unreachable longer than the run's lease, another replica claims the run
// meanwhile, and the store comes back just before the run's loop tries
// again (its heartbeat's next beat is most of a second later). The loop
// checks its claim before going on (runClaim.confirm) and stops, lease
// lost, without a step. Before, it started the agents' steps, each fenced
// by its own step lease only, and they landed (paid model calls) in the
// session the other replica ran.
func TestARunWhoseLeaseWasClaimedDuringAnOutageStartsNoStep(t *testing.T) {
	st := &downStore{Store: memstore.New()}
	// Beats at 1.3, 2.6, 3.9 s; the loop's tries at 0.2, 0.6, 1.4, 3.0 s.
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(),
		RunHeartbeat: 1300 * time.Millisecond, RunLeaseTTL: 2600 * time.Millisecond})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var b coordination.RunLease
	for { // the lease expires 2.6 s after its claim, by the store's clock
		b, err = st.Store.AcquireRun(ctx, s.ID, coordination.LeaseOwner{ID: "replica-b", Host: "elsewhere", PID: 2}, time.Hour)
		if err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.down.Store(false)
	_, err = r.Result()
	if !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the run ended with %v, want its lease lost", err)
	}
	l, err := st.Store.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for agent, es := range l.Agents {
		for _, e := range es {
			t.Errorf("%s's step %d (%s) landed after replica-b claimed the run (version %d)", agent, e.Step, e.Kind, b.Version)
		}
	}
}
