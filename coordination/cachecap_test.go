package coordination_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// setupCountingStore counts the setups a service reads from the store.
type setupCountingStore struct {
	*memstore.Store
	reads atomic.Int64
}

func (s *setupCountingStore) Session(ctx context.Context, id string) (*coordination.Session, error) {
	s.reads.Add(1)
	return s.Store.Session(ctx, id)
}

// TestAThousandLiveSessionsKeepTheirSetups: the 1,000 concurrent sessions
// the benchmarks hold a server to, stepped in turn, find their setups kept.
// With the setup and derivation caches capped below the live sessions, an
// LRU cycled through by more keys than it holds misses every time: each
// step read its setup again, built its prompts again and derived from
// scratch, a tenth more CPU per step in the 1,000-session benchmark.
func TestAThousandLiveSessionsKeepTheirSetups(t *testing.T) {
	const sessions = 1000
	if testing.Short() {
		t.Skip("1,000 sessions: not for -short (make quick); make test runs it")
	}
	ctx := context.Background()
	store := &setupCountingStore{Store: memstore.New()}
	svc := coordination.NewService(store, coordination.Options{Open: backends.Open})
	ids := make([]string, sessions)
	for i := range ids {
		seed := int64(i)
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Driver: coordination.DriverStep,
			Models: []string{"sim/strong", "sim/strong", "sim/strong"}, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = s.ID
	}
	// One step each: every session now has an entry, so its setup can no
	// longer change and is kept while it lives.
	for _, id := range ids {
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_a"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := coordination.CacheSizes(svc); got["setups"] != sessions || got["derived"] != sessions {
		t.Fatalf("the service keeps %d setups and %d derivations of %d live sessions", got["setups"], got["derived"], sessions)
	}
	before := store.reads.Load()
	for _, id := range ids {
		res, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_b"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Finished {
			t.Fatalf("session %s finished after two steps of three agents", id)
		}
	}
	if reads := store.reads.Load() - before; reads != 0 {
		t.Errorf("a second step of each of %d live sessions read %d setups from the store; want none (kept since the first)", sessions, reads)
	}
}
