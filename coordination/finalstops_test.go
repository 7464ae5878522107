package coordination_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// lostAnswerStore writes the next final-call usage entry, then reports an
// outage (the reply lost on a cut connection).
type lostAnswerStore struct {
	*memstore.Store
	armed atomic.Bool
}

func (s *lostAnswerStore) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	out, err := s.Store.AppendSession(ctx, id, e)
	if err == nil && e.Kind == coordination.SessionUsage && strings.HasPrefix(e.Reason, "final call") && s.armed.CompareAndSwap(true, false) {
		return out, errDown
	}
	return out, err
}

func finalSpend(t *testing.T, st *memstore.Store, id string) (float64, int) {
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	sum, n := 0.0, 0
	for _, e := range l.Session {
		if e.Kind == coordination.SessionUsage && e.Usage != nil && e.Usage.CostUSD != nil {
			sum += *e.Usage.CostUSD
			n++
		}
	}
	return sum, n
}

// TestAFinalCallsSpendWhoseAnswerWasLostIsNotRecordedTwice: the store
// takes the final call's usage entry but its answer is lost (an outage);
// the retried finish finds it in the ledger rather than append it again.
func TestAFinalCallsSpendWhoseAnswerWasLostIsNotRecordedTwice(t *testing.T) {
	st := &lostAnswerStore{Store: memstore.New()}
	st.armed.Store(true)
	h, s := paidFinalTeam(t, st, st.Store, func() {})
	res := h.Run(s.ID)
	sum, n := finalSpend(t, st.Store, s.ID)
	t.Logf("status %s, final-call spend recorded $%v in %d entries, result cost %v", res.Status, sum, n, *res.CostUSD)
	if sum != 1 {
		t.Errorf("final-call spend recorded $%v; want $1 once", sum)
	}
}

// slowDownStore: once armed, the next LockSession waits for release and
// then reports an outage (a connect that times out during a failover).
type slowDownStore struct {
	*memstore.Store
	armed   atomic.Bool
	in      chan struct{}
	release chan struct{}
}

func (s *slowDownStore) LockSession(ctx context.Context, id string) (func(), error) {
	if s.armed.CompareAndSwap(true, false) {
		s.in <- struct{}{}
		<-s.release
		return nil, errDown
	}
	return s.Store.LockSession(ctx, id)
}

// TestACancelWhileTheFinishWaitsOutAnOutageKeepsTheFinalAnswer: the final
// call answered and its finish waits out an outage when the run is
// cancelled: the session finishes with that answer, paid for, and its
// spend is recorded; it was dropped, with the winner's answer written.
func TestACancelWhileTheFinishWaitsOutAnOutageKeepsTheFinalAnswer(t *testing.T) {
	st := &slowDownStore{Store: memstore.New(), in: make(chan struct{}, 1), release: make(chan struct{})}
	h, s := paidFinalTeam(t, st, st.Store, func() { st.armed.Store(true) }) // the finish's session lock, next
	r, _, err := h.Service.Start(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-st.in
	r.Cancel() // cancel_team, or SIGTERM, while the finish waits on the store
	close(st.release)
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // any background record
	sum, n := finalSpend(t, st.Store, s.ID)
	fa := "<nil>"
	if res.FinalAnswer != nil {
		fa = *res.FinalAnswer
	}
	t.Logf("status %s, final answer %q, note %q, final-call spend recorded $%v in %d entries", res.Status, fa, res.FinalNote, sum, n)
	if sum != 1 {
		t.Errorf("final-call spend recorded $%v; want $1 (the call was made and paid for)", sum)
	}
}

// decidingForAgentA is a two-agent present team over st (whose memory
// store is mem) that decides for agent_a in its second round, with leases
// that expire 200 ms after their last beat.
func decidingForAgentA(t *testing.T, st coordination.Store, mem *memstore.Store) (*coordtest.Harness, *coordination.Session) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	h.Store = mem
	h.Service = coordination.NewService(st, coordination.Options{Parallel: 8, Open: h.Open, RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond})
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	a := coordtest.Alias(s, "agent_a")
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(a)}
	sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(a)}
	return h, s
}

type fullDiskStore struct {
	*memstore.Store
	armed atomic.Bool
}

func (s *fullDiskStore) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if err := s.full(e); err != nil {
		return e, err
	}
	return s.Store.AppendSession(ctx, id, e)
}

// AppendSessionLeased refuses as AppendSession does: a run's finish is
// written fenced by its lease.
func (s *fullDiskStore) AppendSessionLeased(ctx context.Context, id string, v int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if err := s.full(e); err != nil {
		return e, err
	}
	return s.Store.AppendSessionLeased(ctx, id, v, e)
}

func (s *fullDiskStore) full(e coordination.SessionEntry) error {
	if e.Kind == coordination.SessionFinished && s.armed.CompareAndSwap(true, false) {
		return errors.New("test: no space left on device")
	}
	return nil
}

// TestAFinishTheStoreRefusesLeavesTheSessionInterrupted: a finish refused
// for good (a full disk) stops the run like any error: the decided session
// is left to read interrupted, for a resumed run to finish, not decided
// for ever with its lease released.
func TestAFinishTheStoreRefusesLeavesTheSessionInterrupted(t *testing.T) {
	st := &fullDiskStore{Store: memstore.New()}
	st.armed.Store(true)
	h, s := decidingForAgentA(t, st, st.Store)
	_, err := h.Service.Run(context.Background(), s.ID, nil)
	t.Logf("run: %v", err)
	time.Sleep(2 * time.Second)
	other := coordination.NewService(st, coordination.Options{Open: h.Open})
	v, err := other.Status(context.Background(), s.ID)
	l, _ := st.Store.ReadRun(context.Background(), s.ID)
	t.Logf("2 s later another service reads %s (%v); lease released=%v", v.Result.Status, err, l.Released)
	if v.Result.Status == coordination.StatusDecided {
		t.Error("decided with nothing to write its answer, lease released: no replica takes it up")
	}
}

// paidFinalTeam is a two-agent team on st (over mem) deciding for agent_a
// under present, whose final call answers "FINAL" for $1, calling onFinal
// first (to arm the store's fault for what follows it).
func paidFinalTeam(t *testing.T, st coordination.Store, mem *memstore.Store, onFinal func()) (*coordtest.Harness, *coordination.Session) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 2)
	inner := provs[models[0]]
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose == providers.PurposePresent {
			onFinal()
			cost := 1.0
			return coordtest.Answer("FINAL"), providers.Usage{Input: 1000, Output: 1000, CostUSD: &cost}, nil
		}
		return inner.Step(ctx, req)
	})
	h := coordtest.New(t, provs)
	h.Store = mem
	h.Service = coordination.NewService(st, coordination.Options{Parallel: 8, Open: h.Open, RunHeartbeat: 50 * time.Millisecond})
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	a := coordtest.Alias(s, "agent_a")
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(a)}
	sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(a)}
	return h, s
}
