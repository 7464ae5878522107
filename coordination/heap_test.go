package coordination_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// forgetfulStore is a memory store that keeps only the session in hand:
// each session gets a fresh one, so the heap measured is the Service's, not
// the store's (a server's file store keeps its sessions on disk). It keeps
// projections, as the file store does, so status.json versions are queued.
type forgetfulStore struct{ *memstore.Store }

func (forgetfulStore) Project(coordination.Projection) (func(context.Context) error, error) {
	return func(context.Context) error { return nil }, nil
}

func (forgetfulStore) Dir(string) string { return "" }

// liveHeap is the heap in use after collecting everything unreachable.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// shortSession runs session i to its end, as a client would: every other
// one is run by the server (run_team), the rest stepped by the caller
// (start_team, step); then its status is read once and the timer sweeps.
func shortSession(t *testing.T, svc *coordination.Service, i int) {
	t.Helper()
	ctx := context.Background()
	seed := int64(i)
	spec := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong", "sim/strong"}, Seed: &seed}
	if i%2 == 1 {
		spec.Driver = coordination.DriverStep
	}
	s, err := svc.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Driver == coordination.DriverStep {
		stepToEnd(t, svc, s)
	} else if res, err := svc.Run(ctx, s.ID, nil); err != nil || res.Status != coordination.StatusFinished {
		t.Fatalf("session %d: %v, %+v", i, err, res)
	}
	if _, err := svc.Status(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
}

// stepToEnd steps a caller-driven session's server agents until it ends.
func stepToEnd(t *testing.T, svc *coordination.Service, s *coordination.Session) {
	t.Helper()
	next := s.AgentIDs()
	for steps := 0; len(next) > 0; steps++ {
		if steps > 20 {
			t.Fatalf("session %s did not end in 20 steps", s.ID)
		}
		res, err := svc.Step(context.Background(), coordination.StepRequest{SessionID: s.ID, AgentID: next[0]})
		if err != nil {
			t.Fatal(err)
		}
		if res.Finished {
			return
		}
		next = res.NextAgents
	}
	t.Fatalf("session %s stopped with nobody due and no end", s.ID)
}

// TestServiceDoesNotGrowWithEverySession runs 20,000 short sessions through
// one Service: a server that runs for weeks must hold no more after the
// 20,000th than after the 1,000th (within 10 %). Under the race detector it
// would take minutes, so it skips there, and make test runs it without.
func TestServiceDoesNotGrowWithEverySession(t *testing.T) {
	const total, warm = 20000, 1000
	if raceEnabled {
		t.Skip("20,000 sessions take minutes under the race detector; make test runs this without it")
	}
	if testing.Short() {
		t.Skip("20,000 sessions: not for -short (make quick); make test runs it")
	}
	store := &forgetfulStore{Store: memstore.New()}
	svc := coordination.NewService(store, coordination.Options{Open: backends.Open, Parallel: 2})
	var base uint64
	var warmSizes map[string]int
	for i := range total {
		// Swapped with nothing of the last session in flight: its run or
		// its last step has returned.
		store.Store = memstore.New()
		shortSession(t, svc, i)
		if i+1 == warm {
			base, warmSizes = liveHeap(), coordination.CacheSizes(svc)
		}
	}
	after := liveHeap()
	t.Logf("live heap after %d sessions: %d KiB; after %d: %d KiB (%+.1f %%); caches %v, then %v",
		warm, base>>10, total, after>>10, 100*(float64(after)/float64(base)-1), warmSizes, coordination.CacheSizes(svc))
	if float64(after) > 1.10*float64(base) {
		t.Errorf("the live heap grew from %d KiB after %d sessions to %d KiB after %d: something keeps every session", base>>10, warm, after>>10, total)
	}
	runtime.KeepAlive(svc) // measured above with the service alive
}

// TestAnEndedSessionLeavesNothingCached: once a session has ended and
// nothing of it is in flight, the service keeps no setup, derivation,
// status write or start lock of it. (tidied and opened are capped by size
// alone; ended holds only what the store still lists.)
func TestAnEndedSessionLeavesNothingCached(t *testing.T) {
	store := &forgetfulStore{Store: memstore.New()}
	svc := coordination.NewService(store, coordination.Options{Open: backends.Open, Parallel: 2})
	for i := range 4 {
		shortSession(t, svc, i)
	}
	// A running session's last status.json is written in the background;
	// its writer lets the queue go when it is done, a moment after the run.
	got := coordination.CacheSizes(svc)
	for deadline := time.Now().Add(5 * time.Second); got["statuses"] != 0 && time.Now().Before(deadline); got = coordination.CacheSizes(svc) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, name := range []string{"setups", "derived", "statuses", "starts"} {
		if got[name] != 0 {
			t.Errorf("%s holds %d entries after every session ended: %v", name, got[name], got)
		}
	}
	if got["ended"] != 2 {
		t.Errorf("the timer remembers %d ended sessions, want the 2 step-driven ones: %v", got["ended"], got)
	}
	// A store that no longer lists a session lets the timer forget it.
	store.Store = memstore.New()
	if err := svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := coordination.CacheSizes(svc)["ended"]; n != 0 {
		t.Errorf("the timer still remembers %d sessions the store no longer lists", n)
	}
}
