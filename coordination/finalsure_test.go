package coordination_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// stalledRunRenewals is a memory store, which cannot be unreachable while
// this process lives, whose run renewals stall (a laptop asleep, a long
// fsync) while cut is set.
type stalledRunRenewals struct {
	*memstore.Store
	cut atomic.Bool
}

func (s *stalledRunRenewals) RenewRun(ctx context.Context, id string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	if s.cut.Load() {
		return coordination.RunLease{}, errDown
	}
	return s.Store.RenewRun(ctx, id, version, ttl)
}

// cutRunRenewals is stalledRunRenewals on a store that says it can be
// unreachable (an OutageStore, as the PostgreSQL store is): its renewals
// fail as unreachable while cut is set.
type cutRunRenewals struct{ stalledRunRenewals }

func (s *cutRunRenewals) Unavailable(err error) bool { return errors.Is(err, errDown) }

func newCutRunRenewals() *cutRunRenewals {
	return &cutRunRenewals{stalledRunRenewals{Store: memstore.New()}}
}

// presentTeam is a service on st whose agents are sims but for the
// present call, which is present's (n counts the calls, from 1), and a
// session of two agents that ends with it.
func presentTeam(t *testing.T, st coordination.Store, present func(ctx context.Context, n int32) (providers.Action, providers.Usage, error)) (*coordination.Service, *coordination.Session) {
	t.Helper()
	var calls atomic.Int32
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), RunHeartbeat: 20 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond,
		Open: func(sp providers.Spec) (providers.Provider, error) {
			inner, err := backends.Open(sp)
			if err != nil {
				return nil, err
			}
			return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				if req.Purpose != providers.PurposePresent {
					return inner.Step(ctx, req)
				}
				return present(ctx, calls.Add(1))
			}), nil
		}})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s
}

// runFinishedBy runs s and fails t unless it ended finished, its final
// answer saying answer, after want final calls (as finals counts them).
func runFinishedBy(t *testing.T, svc *coordination.Service, s *coordination.Session, finals *atomic.Int32, want int32, answer string) {
	t.Helper()
	res, err := svc.Run(context.Background(), s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := finals.Load(); res.Status != coordination.StatusFinished || n != want || res.FinalAnswer == nil || !strings.Contains(*res.FinalAnswer, answer) {
		t.Fatalf("run = %s after %d final calls, answer %v (%s); want finished after %d, saying %q", res.Status, n, res.FinalAnswer, res.FinalNote, want, answer)
	}
}

// TestAFinalCallWhoseRunLeaseMayHaveRunOutIsStopped: the store stops
// renewing the run's lease while its final call is made. Once the lease
// may have run out, another replica may take the decided session up and
// make the same call, so this one is stopped then, as a step's is
// (ErrStepLeaseRunOut), rather than paid for to the end and refused at its
// finish (found by review: it went on to the step timeout). The run waits
// for the store, finds its claim still its own, makes the call again and
// finishes; the stopped call's spend is the session's.
func TestAFinalCallWhoseRunLeaseMayHaveRunOutIsStopped(t *testing.T) {
	st := newCutRunRenewals()
	var finals atomic.Int32
	stopped := make(chan time.Duration, 1)
	svc, s := presentTeam(t, st, func(ctx context.Context, n int32) (providers.Action, providers.Usage, error) {
		finals.Store(n)
		paid := providers.Usage{Input: 100, Output: 50, CostUSD: new(0.5)}
		if n > 1 {
			return coordtest.Answer("The final answer: 4"), paid, nil
		}
		st.cut.Store(true)
		start := time.Now()
		select {
		case <-ctx.Done():
			stopped <- time.Since(start)
			st.cut.Store(false) // the store answers again
			return providers.Action{}, paid, context.Cause(ctx)
		case <-time.After(20 * time.Second):
			stopped <- time.Since(start)
			return coordtest.Answer("The final answer: 4"), paid, nil
		}
	})
	runFinishedBy(t, svc, s, &finals, 2, "The final answer")
	if took := <-stopped; took > 5*time.Second {
		t.Fatalf("the final call went on %v after the run's lease (TTL 200 ms) stopped being renewed; want it stopped once the lease may have run out", took)
	}
	spent := 0.0
	for _, u := range usageEntries(t, st, s.ID) {
		if u.Usage != nil && u.Usage.CostUSD != nil {
			spent += *u.Usage.CostUSD
		}
	}
	if spent != 1 {
		t.Errorf("the final calls' usage entries total $%v; want both calls' $0.50", spent)
	}
}

// TestAFinalCallOnAStoreThatCannotBeUnreachableIsNotStopped: the memory
// and file stores do not run out so (a step's call is not stopped there
// either): no other replica can take the session up, and stopping the
// call would only pay for it twice (found by review).
func TestAFinalCallOnAStoreThatCannotBeUnreachableIsNotStopped(t *testing.T) {
	st := &stalledRunRenewals{Store: memstore.New()}
	var finals atomic.Int32
	svc, s := presentTeam(t, st, func(ctx context.Context, n int32) (providers.Action, providers.Usage, error) {
		finals.Store(n)
		if n > 1 {
			return coordtest.Answer("The final answer: 4"), providers.Usage{}, nil
		}
		st.cut.Store(true)
		defer st.cut.Store(false)
		select {
		case <-ctx.Done():
			return providers.Action{}, providers.Usage{}, context.Cause(ctx)
		case <-time.After(time.Second):
			return coordtest.Answer("The final answer: 4"), providers.Usage{}, nil
		}
	})
	runFinishedBy(t, svc, s, &finals, 1, "The final answer")
}

// TestAFinalAnswerThatArrivesAsItsCallIsStoppedIsKept: a final call that
// answered just as its lease's end stopped it gave an answer that was paid
// for: it is written, not thrown away and paid for again (found by review).
func TestAFinalAnswerThatArrivesAsItsCallIsStoppedIsKept(t *testing.T) {
	st := newCutRunRenewals()
	var finals atomic.Int32
	svc, s := presentTeam(t, st, func(ctx context.Context, n int32) (providers.Action, providers.Usage, error) {
		finals.Store(n)
		if n > 1 {
			return coordtest.Answer("A second final answer"), providers.Usage{}, nil
		}
		st.cut.Store(true)
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Second): // never stopped: the bound is gone
		}
		st.cut.Store(false)
		return coordtest.Answer("The final answer: 4"), providers.Usage{}, nil
	})
	runFinishedBy(t, svc, s, &finals, 1, "The final answer")
}

// TestAFinalizesFinalCallWhoseLeaseMayHaveRunOutIsStopped: finalize_team
// on a running team holds the session's run lease while its final call
// runs, as the run did; once that lease may have run out the call is
// stopped alike, an outage for the caller to call again on, rather than
// paid for while another replica takes the session up (found by review).
func TestAFinalizesFinalCallWhoseLeaseMayHaveRunOutIsStopped(t *testing.T) {
	st := newCutRunRenewals()
	stopped := make(chan time.Duration, 1)
	var answered atomic.Bool
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), RunHeartbeat: 20 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond,
		Open: func(sp providers.Spec) (providers.Provider, error) {
			return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				if req.Purpose == providers.PurposeStep {
					if answered.CompareAndSwap(false, true) {
						return coordtest.Answer("Answer: 4"), providers.Usage{}, nil
					}
					<-ctx.Done() // the other agent works until finalize stops it
					return providers.Action{}, providers.Usage{}, context.Cause(ctx)
				}
				st.cut.Store(true)
				start := time.Now()
				select {
				case <-ctx.Done():
					stopped <- time.Since(start)
					return providers.Action{}, providers.Usage{}, context.Cause(ctx)
				case <-time.After(20 * time.Second):
					stopped <- time.Since(start)
					return coordtest.Answer("The final answer: 4"), providers.Usage{}, nil
				}
			}), nil
		}})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = svc.Run(ctx, s.ID, nil) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		v, err := svc.Status(ctx, s.ID)
		if err == nil && (v.Agents[0].Answers > 0 || v.Agents[1].Answers > 0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer landed: %v", err)
		}
	}
	_, err = svc.Finalize(ctx, s.ID, "")
	if took := <-stopped; took > 5*time.Second {
		t.Fatalf("finalize's final call went on %v after its lease (TTL 200 ms) stopped being renewed", took)
	}
	if !svc.StoreUnreachable(ctx, err) {
		t.Fatalf("finalize = %v; want an outage, to call again on", err)
	}
}
