package coordination_test

import (
	"context"
	"errors"
	"fmt"
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

// A run's end must leave its session reading true: never decided with
// nothing writing its answer, never running with nothing running it, and
// never written to after its lease may have gone to another replica.

// blipStore fails the next LockSession once as an outage when failNext is set.
type blipStore struct {
	*memstore.Store
	failNext atomic.Bool
}

func (s *blipStore) LockSession(ctx context.Context, id string) (func(), error) {
	if s.failNext.CompareAndSwap(true, false) {
		return nil, fmt.Errorf("test: connection reset: %w", coordination.ErrStoreUnavailable)
	}
	return s.Store.LockSession(ctx, id)
}

// downStore is unreachable for the session lock and lease renewals while
// down is set, as a database gone away is.
type downStore struct {
	*memstore.Store
	down atomic.Bool
}

var errDown = fmt.Errorf("test: connection refused: %w", coordination.ErrStoreUnavailable)

func (s *downStore) LockSession(ctx context.Context, id string) (func(), error) {
	if s.down.Load() {
		return nil, errDown
	}
	return s.Store.LockSession(ctx, id)
}

func (s *downStore) RenewRun(ctx context.Context, id string, v int64, ttl time.Duration) (coordination.RunLease, error) {
	if s.down.Load() {
		return coordination.RunLease{}, errDown
	}
	return s.Store.RenewRun(ctx, id, v, ttl)
}

// pendingFinal is a two-agent team deciding for agent_a under present,
// whose final call waits for its context; inFinal hears when it starts.
func pendingFinal(t *testing.T, rules coordination.Rules) (h *coordtest.Harness, s *coordination.Session, inFinal chan struct{}) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 2)
	inFinal = make(chan struct{}, 1)
	inner := provs[models[0]]
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose == providers.PurposePresent {
			inFinal <- struct{}{}
			<-ctx.Done()
			return providers.Action{}, providers.Usage{}, ctx.Err()
		}
		return inner.Step(ctx, req)
	})
	h = coordtest.New(t, provs)
	rules.Final = coordination.FinalPresent
	s = h.Create(coordination.TeamSpec{Models: models, Rules: rules})
	a := coordtest.Alias(s, "agent_a")
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(a)}
	sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(a)}
	return h, s, inFinal
}

// finishedAsIs checks the session finished with agent_a's answer as is,
// its note saying why (want), and its run lease released.
func finishedAsIs(t *testing.T, h *coordtest.Harness, id, want string) {
	t.Helper()
	ctx := context.Background()
	v, err := h.Service.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	res := v.Result
	if res.Status != coordination.StatusFinished || res.Winner == nil || res.Winner.AgentID != "agent_a" {
		t.Fatalf("the session reads %s (winner %+v); want finished with agent_a's answer", res.Status, res.Winner)
	}
	if !strings.Contains(res.FinalNote, want) || !strings.Contains(res.FinalNote, "winner's answer is used as is") {
		t.Errorf("final note %q; want it to say %q and that the winner's answer is used", res.FinalNote, want)
	}
	if l, err := h.Store.ReadRun(ctx, id); err != nil || !l.Released {
		t.Errorf("run lease %+v, %v; want it released", l, err)
	}
}

// TestACancelDuringTheFinalCallFinishesWithTheWinnersAnswer: a run
// cancelled (or shut down) while its final call is pending finishes the
// session with the winner's answer. It returned the cancel and left the
// session decided, waiting for an answer nothing would write, its lease
// released so no replica took it up; and Cancel refuses a decided session.
func TestACancelDuringTheFinalCallFinishesWithTheWinnersAnswer(t *testing.T) {
	h, s, inFinal := pendingFinal(t, coordination.Rules{})
	ctx := context.Background()
	r, _, err := h.Service.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-inFinal
	r.Cancel() // Cancel, or serve's shutdown (CancelAll)
	if _, err := r.Result(); err != nil {
		t.Fatalf("the run cancelled during its final call: %v; want the winner's answer", err)
	}
	finishedAsIs(t, h, s.ID, "stopped (cancelled or shut down) while the final call was pending")
}

// TestATimeoutDuringTheFinalCallFinishesWithTheWinnersAnswer: the run's
// timeout during the final call finishes the session as the timeout of a
// step-driven one does, with the winner's answer.
func TestATimeoutDuringTheFinalCallFinishesWithTheWinnersAnswer(t *testing.T) {
	h, s, _ := pendingFinal(t, coordination.Rules{TimeoutSeconds: 0.5})
	if _, err := h.Service.Run(context.Background(), s.ID, nil); err != nil {
		t.Fatalf("the run whose timeout came during its final call: %v; want the winner's answer", err)
	}
	finishedAsIs(t, h, s.ID, "timeout ended it while the final call was pending")
}

// TestAFinalCallsSpendIsRecordedOnceThroughAnOutage: the store is
// unreachable just after the final call answered. The run waits the outage
// out and finishes without calling the model again, and the call's spend is
// in the result it returns. It was dropped, and the call made and paid for
// a second time.
func TestAFinalCallsSpendIsRecordedOnceThroughAnOutage(t *testing.T) {
	st := &blipStore{Store: memstore.New()}
	var finals atomic.Int64
	h, s := paidFinalTeam(t, st, st.Store, func() {
		if finals.Add(1) == 1 {
			st.failNext.Store(true) // the finish's session lock, next
		}
	})
	res := h.Run(s.ID)
	if n := finals.Load(); n != 1 {
		t.Errorf("%d final calls; want 1 (the outage after it is waited out, not paid for again)", n)
	}
	if recorded, _ := finalSpend(t, st.Store, s.ID); recorded != 1 {
		t.Errorf("final-call spend recorded: $%v; want $1, once", recorded)
	}
	if res.FinalAnswer == nil || *res.FinalAnswer != "FINAL" {
		t.Errorf("final answer %v; want the final call's", res.FinalAnswer)
	}
	if res.CostUSD == nil || *res.CostUSD < 1 {
		t.Errorf("the result's cost %v leaves out the final call's $1", res.CostUSD)
	}
}

// deadRun leaves s's run lease claimed by a dead replica elsewhere, and
// waits until the session reads interrupted.
func deadRun(t *testing.T, svc *coordination.Service, st *memstore.Store, id string) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.AcquireRun(ctx, id, coordination.LeaseOwner{ID: "dead", Host: "elsewhere", PID: 1}, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10*time.Millisecond + coordination.MaxClockSkew + 50*time.Millisecond) // another host's lease: its expiry and the skew
	if v, err := svc.Status(ctx, id); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Fatalf("setup: the session reads %v, %v; want interrupted", v, err)
	}
}

// TestAResumeThatMeetsAnOutageWaitsItOut: a run taking over a dead one whose
// first record (lifting the cancels) meets the store unreachable waits and
// goes on. It returned the error and released the lease it had taken over:
// the session, interrupted before, read running with nothing running it.
func TestAResumeThatMeetsAnOutageWaitsItOut(t *testing.T) {
	st := &blipStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(), RunHeartbeat: 5 * time.Millisecond, RunLeaseTTL: time.Minute})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	deadRun(t, svc, st.Store, s.ID)
	st.failNext.Store(true)
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatalf("the resumed run: %v; want the outage waited out", err)
	}
	if res.Status != coordination.StatusFinished {
		t.Errorf("the resumed run ended %s; want finished", res.Status)
	}
	// What an operator's metrics read of it (counts.go).
	if c := svc.Counts(); c.RunsTakenOver != 1 || c.StoreWaits != 1 || c.RunsLostLease != 0 {
		t.Errorf("counts %+v; want the dead run taken over once and one wait on the store", c)
	}
}

// TestAStartThatFailsAfterTakingOverADeadRunLeavesItInterrupted: a start
// refused after its claim took over from a dead run (here: a host agent,
// which run_team cannot run) leaves the lease to expire again, so the
// session still reads interrupted. Released, it read running for ever.
func TestAStartThatFailsAfterTakingOverADeadRunLeavesItInterrupted(t *testing.T) {
	st := memstore.New()
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(), RunHeartbeat: 5 * time.Millisecond, RunLeaseTTL: 50 * time.Millisecond})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Driver: coordination.DriverStep,
		Agents: []coordination.Agent{{ID: "agent_a", Model: "sim"}, {ID: "me", Model: "host"}}})
	if err != nil {
		t.Fatal(err)
	}
	deadRun(t, svc, st, s.ID)
	if _, _, err := svc.Start(ctx, s.ID); err == nil {
		t.Fatal("run_team of a session with a host agent started")
	}
	if c := svc.Counts(); c.RunsTakenOver != 0 {
		t.Errorf("counts %+v: a start that failed counted as a run taken over", c)
	}
	l, err := st.ReadRun(ctx, s.ID)
	if err != nil || l.Released {
		t.Fatalf("the lease after the failed start: %+v, %v; want it left unreleased", l, err)
	}
	untilStatus(t, svc, s.ID, coordination.StatusInterrupted, "after the failed start")
}

// untilStatus waits, at most 5 s, for session id to read want, and fails
// the test saying what it read instead, after what.
func untilStatus(t *testing.T, svc *coordination.Service, id string, want, after string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := svc.Status(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if v.Result.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session reads %s 5 s %s; want %s", v.Result.Status, after, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAStopsRecordIsNotWrittenOnceItsLeaseMayHaveRunOut: a run cancelled
// while the store is down tries to record the cancel only while its lease
// surely holds. It went on for a TTL from the cancel, and wrote "run
// cancelled" into the session after another replica had claimed the run.
func TestAStopsRecordIsNotWrittenOnceItsLeaseMayHaveRunOut(t *testing.T) {
	st := &downStore{Store: memstore.New()}
	svc, started := blockedService(st, coordination.Options{RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: time.Second})
	ctx := context.Background()
	s, r := blockedRun(t, svc, started)
	t0 := time.Now()
	st.down.Store(true)
	time.Sleep(500 * time.Millisecond)
	r.Cancel()
	time.Sleep(time.Until(t0.Add(1100 * time.Millisecond)))
	b, err := st.Store.AcquireRun(ctx, s.ID, coordination.LeaseOwner{ID: "replica-b", Host: "elsewhere", PID: 2}, time.Hour)
	if err != nil {
		t.Fatalf("the other replica's claim of the expired run: %v", err)
	}
	st.down.Store(false)
	<-r.Done()
	l, err := st.Store.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Session {
		if e.Kind == coordination.SessionCancelled {
			t.Errorf("the stopped run wrote %q at %s, into a session another replica claimed at %s", e.Reason, e.Time.Format("15:04:05.000"), b.Claimed.Format("15:04:05.000"))
		}
	}
}

// TestACancelTheStoreNeverTookSaysSo: a cancel whose record an outage kept
// from the store tells the caller the run stopped but the cancel was not
// kept, and what to do, not only the store's error.
func TestACancelTheStoreNeverTookSaysSo(t *testing.T) {
	st := &downStore{Store: memstore.New()}
	svc, started := blockedService(st, coordination.Options{RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: time.Second})
	ctx := context.Background()
	s, _ := blockedRun(t, svc, started)
	st.down.Store(true)
	_, err := svc.Cancel(ctx, s.ID)
	if err == nil || !strings.Contains(err.Error(), "cancel could not be recorded") || !strings.Contains(err.Error(), "cancel it again") {
		t.Fatalf("Cancel while the store is down: %v; want it to say the cancel was not recorded and to cancel again", err)
	}
	if _, here := svc.Running(s.ID); here {
		t.Error("the run still runs after the cancel")
	}
}

// TestShutdownCancelsEveryRunAndStartsNoMore: Shutdown cancels the runs
// (their sessions read cancelled, resumable) and refuses every run asked
// after it began, even one whose request came in before: CancelAll alone
// took its list of runs, and a run starting just after it went on while
// the server closed its store.
func TestShutdownCancelsEveryRunAndStartsNoMore(t *testing.T) {
	st := memstore.New()
	svc, started := blockedService(st, coordination.Options{})
	ctx := context.Background()
	later, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	running, _ := blockedRun(t, svc, started)
	if err := svc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := svc.Status(ctx, running.ID); err != nil || v.Result.Status != coordination.StatusCancelled {
		t.Errorf("the run's session after Shutdown: %v, %v; want cancelled", v, err)
	}
	if _, _, err := svc.Start(ctx, later.ID); !errors.Is(err, coordination.ErrShuttingDown) {
		t.Errorf("a run asked after Shutdown: %v; want ErrShuttingDown", err)
	}
	if l, err := st.ReadRun(ctx, later.ID); err == nil && l != nil && !l.Released {
		t.Errorf("the refused run left a claim: %+v", l)
	}
}

// TestAHandingOverShutdownLeavesItsRunsToBeTakenUp: a service with
// HandOver (serve --resume-interrupted) stops its runs writing nothing and
// makes their leases expire, so their sessions read interrupted at once
// and another service resuming those finishes them; a cancelling one would
// have left them cancelled, for the user to resume by hand.
func TestAHandingOverShutdownLeavesItsRunsToBeTakenUp(t *testing.T) {
	st := memstore.New()
	a, started := blockedService(st, coordination.Options{HandOver: true, RunLeaseTTL: time.Minute})
	ctx := context.Background()
	s, r := blockedRun(t, a, started)
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Result(); err == nil || !strings.Contains(err.Error(), "hands the run over") {
		t.Errorf("the handed-over run's error: %v; want it to say the run is handed over", err)
	}
	if l, err := st.ReadRun(ctx, s.ID); err != nil || l == nil || l.Released {
		t.Fatalf("the run lease after a handing-over shutdown: %+v, %v; want it left to expire", l, err)
	}
	// At once, not a minute's TTL later: the hand-over expires the lease.
	b := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	if v, err := b.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Fatalf("the session after a handing-over shutdown: %v, %v; want interrupted at once", v, err)
	}
	resumed, err := b.ResumeInterrupted(ctx, nil)
	if err != nil || len(resumed) != 1 {
		t.Fatalf("resuming: %v, %v; want the handed-over session", resumed, err)
	}
	res, err := b.Run(ctx, s.ID, nil)
	if err != nil || res.Status != coordination.StatusFinished {
		t.Fatalf("the taken-up run: %v, %v; want finished", res, err)
	}
	for _, e := range ledgerOf(t, st, s.ID).Session {
		if e.Kind == coordination.SessionCancelled {
			t.Errorf("the handed-over session was cancelled: %+v", e)
		}
	}
}

func ledgerOf(t *testing.T, st *memstore.Store, id string) *coordination.Ledger {
	t.Helper()
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// blockedService is a service on st (opts otherwise as given) whose every
// model call waits for its context to end; started hears each call begin.
func blockedService(st coordination.Store, opts coordination.Options) (*coordination.Service, chan struct{}) {
	started := make(chan struct{}, 8)
	block := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		started <- struct{}{}
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	opts.Logger = zerolog.Nop()
	opts.Open = func(providers.Spec) (providers.Provider, error) { return block, nil }
	return coordination.NewService(st, opts), started
}

// blockedRun starts a two-agent team on a blockedService and waits until
// its first model call is under way.
func blockedRun(t *testing.T, svc *coordination.Service, started chan struct{}) (*coordination.Session, *coordination.Run) {
	t.Helper()
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	return s, r
}

// timeoutFinalPending starts a two-agent run, under opts, whose timeout
// (0.5 s) decides for agent_a's only answer and whose final call then
// waits for its context; it returns once that call has begun.
func timeoutFinalPending(t *testing.T, opts coordination.Options) (*coordtest.Harness, *coordination.Session, *coordination.Run) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 2)
	inFinal := make(chan struct{}, 1)
	answerA, wait := provs[models[0]], func(ctx context.Context) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	}
	var answered atomic.Bool
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		switch {
		case req.Purpose == providers.PurposePresent:
			inFinal <- struct{}{}
			return wait(ctx)
		case answered.CompareAndSwap(false, true):
			return answerA.Step(ctx, req)
		}
		return wait(ctx)
	})
	provs[models[1]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		return wait(ctx)
	})
	sc[0].Replies = []any{coordtest.Answer("4")}
	h := coordtest.NewWith(t, provs, opts)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{TimeoutSeconds: 0.5, Final: coordination.FinalPresent}})
	r, _, err := h.Service.Start(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-inFinal:
	case <-time.After(10 * time.Second):
		t.Fatal("the timeout's final call never began")
	}
	return h, s, r
}

// ended waits for r to end, at most 5 s.
func ended(t *testing.T, r *coordination.Run, after string) {
	t.Helper()
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("the run still waits on its final call 5 s after %s", after)
	}
}

// TestACancelDuringTheTimeoutsFinalCallStopsIt: a run whose timeout decided
// the session makes the final call; a cancel meanwhile stops that call and
// finishes the session with the winner's answer, as during any final call.
// The call ran on a context nothing could end, so the cancel (or a
// shutdown) waited for it up to the step timeout (ten minutes by default).
func TestACancelDuringTheTimeoutsFinalCallStopsIt(t *testing.T) {
	h, s, r := timeoutFinalPending(t, coordination.Options{Parallel: 8})
	r.Cancel()
	ended(t, r, "the cancel")
	if _, err := r.Result(); err != nil {
		t.Fatalf("the run cancelled during the timeout's final call: %v; want the winner's answer", err)
	}
	finishedAsIs(t, h, s.ID, "stopped (cancelled or shut down) while the final call was pending")
}

// TestAHandingOverShutdownDuringTheTimeoutsFinalCallHandsItOver: a service
// that hands its runs over (serve --resume-interrupted), shut down during
// the timeout's final call, stops the call and hands the decided session
// over: it reads interrupted at once, for another replica to write its
// answer.
func TestAHandingOverShutdownDuringTheTimeoutsFinalCallHandsItOver(t *testing.T) {
	h, s, r := timeoutFinalPending(t, coordination.Options{Parallel: 8, HandOver: true, RunLeaseTTL: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Service.Shutdown(ctx); err != nil {
		t.Fatalf("the shutdown: %v; want it to stop the final call and hand the run over", err)
	}
	ended(t, r, "the shutdown")
	b := coordination.NewService(h.Store, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	v, err := b.Status(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusInterrupted {
		t.Errorf("the session after the hand-over reads %s; want interrupted, for a replica to write its answer", v.Result.Status)
	}
}
