package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAFinalizeDuringTheRunsFinalCallPaysForItOnce: finalize_team on the
// server whose run of a decided session is making its final call waits for
// that call's answer. It used to cut the call (its spend recorded) and then
// make a second one of its own: two calls paid for one answer, and the
// first answer thrown away.
func TestAFinalizeDuringTheRunsFinalCallPaysForItOnce(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	inFinal := make(chan struct{}, 4)
	var finals atomic.Int32
	presenting(provs, func(ctx context.Context, _ providers.Request) (providers.Action, providers.Usage, error) {
		n := finals.Add(1)
		inFinal <- struct{}{}
		select {
		case <-ctx.Done():
			return providers.Action{}, providers.Usage{Input: 1000}, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		return coordtest.Answer(fmt.Sprintf("FINAL%d", n)), providers.Usage{Input: 1000}, nil
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	b := coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("four"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("4"), coordtest.Vote(b)}
	ctx := context.Background()
	if _, _, err := h.Service.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	<-inFinal
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatalf("Finalize during the run's final call: %v; want the run's answer", err)
	}
	if n := finals.Load(); n != 1 {
		t.Fatalf("%d final calls paid for one answer, want 1", n)
	}
	if res.Status != coordination.StatusFinished || res.FinalAnswer == nil || *res.FinalAnswer != "FINAL1" {
		t.Fatalf("Finalize returned %s, want the run's final answer FINAL1", coordtest.JSON(res))
	}
}

// entryDownStore fails the session entries hit picks as an outage while
// down is set: refused, or, with lost, written and the answer lost.
type entryDownStore struct {
	*memstore.Store
	hit  func(coordination.SessionEntryKind) bool
	lost bool
	down atomic.Bool
}

// kindDown is an entryDownStore failing the entries of kind.
func kindDown(kind coordination.SessionEntryKind) *entryDownStore {
	return &entryDownStore{Store: memstore.New(), hit: func(k coordination.SessionEntryKind) bool { return k == kind }}
}

func (s *entryDownStore) append(e coordination.SessionEntry, write func() (coordination.SessionEntry, error)) (coordination.SessionEntry, error) {
	if !s.down.Load() || !s.hit(e.Kind) {
		return write()
	}
	if s.lost {
		_, _ = write()
	}
	return coordination.SessionEntry{}, fmt.Errorf("test: %w", coordination.ErrStoreUnavailable)
}

func (s *entryDownStore) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	return s.append(e, func() (coordination.SessionEntry, error) { return s.Store.AppendSession(ctx, id, e) })
}

func (s *entryDownStore) AppendSessionLeased(ctx context.Context, id string, v int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	return s.append(e, func() (coordination.SessionEntry, error) { return s.Store.AppendSessionLeased(ctx, id, v, e) })
}

// TestAFailedFinalizeOfACancelledSessionLeavesItCancelled: finalize_team of
// a cancelled session resumes it to decide; when the decision cannot be
// written (an outage), the session is cancelled again, as its user left
// it. It read running for ever, its lease released, so that no replica took
// it up and nothing said why.
func TestAFailedFinalizeOfACancelledSessionLeavesItCancelled(t *testing.T) {
	svc, id := failedFinalizeOfACancelledSession(t, false)
	time.Sleep(500 * time.Millisecond) // past any lease
	if v, err := svc.Status(context.Background(), id); err != nil || v.Result.Status != coordination.StatusCancelled {
		t.Fatalf("after a failed Finalize of a cancelled session it reads %s (%v), want cancelled", v.Result.Status, err)
	}
}

// TestAFinalizeWhoseFinishFailsLeavesTheSessionInterrupted: a Finalize that
// decided a session and could not write its finish leaves its lease to
// expire, so the session reads interrupted, for a run taken up again to
// write the answer; released, it read decided with nothing to write it.
func TestAFinalizeWhoseFinishFailsLeavesTheSessionInterrupted(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	st := kindDown(coordination.SessionFinished)
	h := &coordtest.Harness{T: t, Providers: provs, Store: st.Store}
	h.Service = coordination.NewService(st, coordination.Options{Open: h.Open, RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond})
	s := h.Create(coordination.TeamSpec{Models: models})
	bothAnswered(t, h.Service, sc, s.ID)
	ctx := context.Background()
	st.down.Store(true)
	if _, err := h.Service.Finalize(ctx, s.ID, coordination.FinalPresent); !errors.Is(err, coordination.ErrStoreUnavailable) {
		t.Fatalf("Finalize while finishes cannot be written: %v, want the outage", err)
	}
	st.down.Store(false)
	untilStatus(t, h.Service, s.ID, coordination.StatusInterrupted, "after a Finalize whose finish failed")
}

// TestAFinalizeWaitingForTheRunsFinalCallHonoursItsContext: a Finalize that
// waits for a decided run's final call stops waiting when its caller goes
// away (the run goes on writing its answer); it waited out the whole call.
func TestAFinalizeWaitingForTheRunsFinalCallHonoursItsContext(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	inFinal := make(chan struct{}, 4)
	presenting(provs, func(ctx context.Context, _ providers.Request) (providers.Action, providers.Usage, error) {
		inFinal <- struct{}{}
		select {
		case <-ctx.Done():
			return providers.Action{}, providers.Usage{Input: 1000}, ctx.Err()
		case <-time.After(3 * time.Second): // a slow model, or a person writing it
		}
		return coordtest.Answer("FINAL"), providers.Usage{Input: 1000}, nil
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	b := coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("four"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("4"), coordtest.Vote(b)}
	if _, _, err := h.Service.Start(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	<-inFinal
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	if _, err := h.Service.Finalize(ctx, s.ID, ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Finalize whose caller went away: %v; want its context's end", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Fatalf("Finalize returned %v after its context ended at 200 ms", took.Round(time.Millisecond))
	}
	untilStatus(t, h.Service, s.ID, coordination.StatusFinished, "after the run's final call")
}

// TestAnInterruptedFinalizeIsFinishedNotRunAsATeam: a Finalize of a
// cancelled session resumed it and then met an outage that kept it from
// deciding and from cancelling it again: the session reads interrupted. A
// replica resuming interrupted sessions finishes that finalize; it used to
// run the team its user had cancelled and asked to end.
func TestAnInterruptedFinalizeIsFinishedNotRunAsATeam(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	// An outage that begins right after the Finalize's resume landed.
	st := &entryDownStore{Store: memstore.New(), hit: func(k coordination.SessionEntryKind) bool { return k != coordination.SessionResumed }}
	h := &coordtest.Harness{T: t, Providers: provs, Store: st.Store}
	h.Service = coordination.NewService(st, coordination.Options{Open: h.Open, RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond})
	s := h.Create(coordination.TeamSpec{Models: models})
	bothAnswered(t, h.Service, sc, s.ID)
	ctx := context.Background()
	if _, err := h.Service.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	if _, err := h.Service.Finalize(ctx, s.ID, ""); !errors.Is(err, coordination.ErrStoreUnavailable) {
		t.Fatalf("Finalize in the outage: %v, want the outage", err)
	}
	st.down.Store(false)
	untilStatus(t, h.Service, s.ID, coordination.StatusInterrupted, "after the finalize met the outage")
	steps := len(h.Ledger(s.ID).Agents["agent_a"]) + len(h.Ledger(s.ID).Agents["agent_b"])
	ids, err := h.Service.ResumeInterrupted(ctx, nil)
	if err != nil || len(ids) != 1 {
		t.Fatalf("ResumeInterrupted: %v, %v; want the session taken up", ids, err)
	}
	v, err := h.Service.Status(ctx, s.ID)
	if err != nil || v.Result.Status != coordination.StatusFinished || coordination.Deref(v.Result.StopReason) != coordination.StopFinalized {
		t.Fatalf("the session after ResumeInterrupted: %+v, %v; want finished by the finalize", v.Result, err)
	}
	if after := len(h.Ledger(s.ID).Agents["agent_a"]) + len(h.Ledger(s.ID).Agents["agent_b"]); after != steps {
		t.Fatalf("%d steps were taken after the user cancelled and asked to finalize", after-steps)
	}
}

// TestAFinalizeWhoseDecisionsAnswerWasLostLeavesTheSessionInterrupted: a
// Finalize of a cancelled session whose decision was written but its answer
// lost (an outage at the commit) cannot cancel the decided session again,
// so it leaves its lease to expire: the session reads interrupted, for the
// run that takes it up to write the answer, not decided with nothing to.
func TestAFinalizeWhoseDecisionsAnswerWasLostLeavesTheSessionInterrupted(t *testing.T) {
	svc, id := failedFinalizeOfACancelledSession(t, true)
	untilStatus(t, svc, id, coordination.StatusInterrupted, "after the finalize's decision's answer was lost")
}

// failedFinalizeOfACancelledSession is a session of two answers, cancelled,
// whose Finalize met an outage writing its decision (lost: the decision
// written, its answer lost), with the store back; it returns the service
// and the session.
func failedFinalizeOfACancelledSession(t *testing.T, lost bool) (*coordination.Service, string) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 2)
	st := kindDown(coordination.SessionDecided)
	st.lost = lost
	h := &coordtest.Harness{T: t, Providers: provs, Store: st.Store}
	h.Service = coordination.NewService(st, coordination.Options{Open: h.Open, RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond})
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	bothAnswered(t, h.Service, sc, s.ID)
	ctx := context.Background()
	if _, err := h.Service.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	if _, err := h.Service.Finalize(ctx, s.ID, ""); !errors.Is(err, coordination.ErrStoreUnavailable) {
		t.Fatalf("Finalize while its decision cannot be written: %v, want the outage", err)
	}
	st.down.Store(false)
	return h.Service, s.ID
}
