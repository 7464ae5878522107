package coordination_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// outageStore is a leasedStore that becomes unreachable at a step's start
// (the model call is already on its way) or right after a landing whose
// answer it lost: while down, the session lock cannot be taken, as a
// PostgreSQL store's cannot while the database is gone.
type outageStore struct {
	*leasedStore
	downAtStart atomic.Bool // armed: down once a step has started
	down        atomic.Bool
	refused     atomic.Int64       // session locks refused while down
	loseUsage   atomic.Bool        // armed: a usage entry is written, its answer lost, once
	rules       coordination.Rules // the session's
	// dir, if set, is the state directory a replica keeps its workspaces
	// in (and so its spend spool): sessions/<id> under it.
	dir string
}

func (s *outageStore) WorkDir(id string) string {
	if s.dir == "" {
		return ""
	}
	return filepath.Join(s.dir, "sessions", id)
}

func (s *outageStore) Snapshots(string) workspace.Remote { return nil }

func (s *outageStore) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	out, err := s.leasedStore.AppendSession(ctx, id, e)
	if err == nil && e.Kind == coordination.SessionUsage && s.loseUsage.CompareAndSwap(true, false) {
		return coordination.SessionEntry{}, errLostAnswer
	}
	return out, err
}

func (s *outageStore) AppendEvent(ctx context.Context, id string, ev coordination.Event) error {
	if ev.Type == "step_started" && s.downAtStart.CompareAndSwap(true, false) {
		s.down.Store(true)
	}
	return s.leasedStore.AppendEvent(ctx, id, ev)
}

// passKey marks a context whose calls the outage lets through: a test's
// own calls made while the step's spend waits for the store.
type passKey struct{}

func (s *outageStore) LockSession(ctx context.Context, id string) (func(), error) {
	if s.down.Load() && ctx.Value(passKey{}) == nil {
		s.refused.Add(1)
		return nil, errLostAnswer
	}
	return s.leasedStore.LockSession(ctx, id)
}

func (s *outageStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	l, err := s.leasedStore.LockStep(ctx, id, agent)
	if err != nil {
		return nil, err
	}
	return &outageLock{leasedLock: l.(*leasedLock), st: s}, nil
}

// outageLock goes down with its store once its landing's answer is lost.
type outageLock struct {
	*leasedLock
	st *outageStore
}

func (l *outageLock) LandLeased(ctx context.Context, e coordination.Entry, version int64, cancels int) (coordination.Entry, bool, error) {
	out, ok, err := l.leasedLock.LandLeased(ctx, e, version, cancels)
	if errors.Is(err, errLostAnswer) {
		l.st.down.Store(true)
	}
	return out, ok, err
}

// stepCancelledInAnOutage runs a server step of st's session whose run is
// cancelled once the step's landing has met the outage, calls meanwhile
// (if set; its context's calls pass the outage), then brings the store
// back and waits for the spend's record to end. It returns the service,
// the session, the agent and the logs.
func stepCancelledInAnOutage(t *testing.T, st *outageStore, meanwhile func(context.Context, *coordination.Service, *coordination.Session)) (*coordination.Service, *coordination.Session, string, *coordtest.SyncBuffer) {
	t.Helper()
	logs := &coordtest.SyncBuffer{}
	svc, s := leasedTeamWith(t, st, logs, st.rules)
	agent := s.AgentIDs()[0]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for st.refused.Load() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
		cancel() // the run is cancelled during the outage
	}()
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err == nil {
		t.Fatal("a step whose landing met the outage and was cancelled returned no error")
	}
	if meanwhile != nil {
		meanwhile(context.WithValue(context.Background(), passKey{}, true), svc, s)
	}
	st.down.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "the store answered again: a call's spend outside its step is recorded") {
		if time.Now().After(deadline) {
			t.Fatalf("the spend's record never found the store back; logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return svc, s, agent, logs
}

// usageEntries are the session's usage entries.
func usageEntries(t *testing.T, st coordination.Store, id string) []coordination.SessionEntry {
	t.Helper()
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []coordination.SessionEntry
	for _, e := range l.Session {
		if e.Kind == coordination.SessionUsage {
			out = append(out, e)
		}
	}
	return out
}

// TestASpendGivenUpWithItsRunInAnOutageIsRecordedWhenTheStoreAnswers: a
// server step whose model call finished while the store was unreachable,
// and whose run was cancelled while its landing waited, wrote no entry;
// what its model spent is recorded as a usage entry once the store
// answers again, not lost.
func TestASpendGivenUpWithItsRunInAnOutageIsRecordedWhenTheStoreAnswers(t *testing.T) {
	st := &outageStore{leasedStore: &leasedStore{Store: memstore.New()}}
	st.downAtStart.Store(true)
	_, s, agent, _ := stepCancelledInAnOutage(t, st, nil)
	u := usageEntries(t, st, s.ID)
	if len(u) != 1 || u[0].Usage == nil || u[0].Usage.Tokens() == 0 || len(u[0].Agents) != 1 || u[0].Agents[0] != agent {
		t.Fatalf("usage entries %+v; want one with the step's tokens, for %s", u, agent)
	}
	if !strings.Contains(u[0].Reason, "unreachable") {
		t.Errorf("the usage entry's reason %q does not say the step was given up in an outage", u[0].Reason)
	}
	l, err := st.Ledger(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Agents[agent]); n != 0 {
		t.Errorf("%s has %d entries; the step given up wrote none", agent, n)
	}
}

// TestASpendWhoseStepLandedBeforeTheOutageIsNotCountedTwice: the landing
// wrote the entry but its answer was lost, the store went away, and the
// run was cancelled while the retry waited: the step's spend is in its
// entry, so no usage entry repeats it.
func TestASpendWhoseStepLandedBeforeTheOutageIsNotCountedTwice(t *testing.T) {
	st := &outageStore{leasedStore: &leasedStore{Store: memstore.New()}}
	st.lose.Store(true)
	_, s, agent, _ := stepCancelledInAnOutage(t, st, nil)
	l, err := st.Ledger(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Agents[agent]); n != 1 {
		t.Fatalf("%s has %d entries, want the one whose answer was lost", agent, n)
	}
	if u := usageEntries(t, st, s.ID); len(u) != 0 {
		t.Errorf("usage entries %+v beside the landed step's own: its spend counted twice", u)
	}
}

// TestAUsageEntryWhoseAnswerWasLostIsNotWrittenTwice: the usage entry of a
// step given up in an outage is written once the store answers, but its
// answer is lost; the retry finds it stored and writes no second one.
func TestAUsageEntryWhoseAnswerWasLostIsNotWrittenTwice(t *testing.T) {
	st := &outageStore{leasedStore: &leasedStore{Store: memstore.New()}}
	st.downAtStart.Store(true)
	st.loseUsage.Store(true)
	_, s, _, _ := stepCancelledInAnOutage(t, st, nil)
	if st.loseUsage.Load() {
		t.Fatal("the usage entry's answer was never lost: the test did not test the retry")
	}
	if u := usageEntries(t, st, s.ID); len(u) != 1 {
		t.Errorf("%d usage entries after a lost answer and its retry, want 1: %+v", len(u), u)
	}
}

// TestAUsageFoundRecordedOnARetryStillAmendsTheResult: a usage entry whose
// answer was lost is found on the retry and not written again, but the
// session's result, recorded meanwhile by a finalize, is still amended
// with it: the attempt that wrote it never settled.
func TestAUsageFoundRecordedOnARetryStillAmendsTheResult(t *testing.T) {
	st := &outageStore{leasedStore: &leasedStore{Store: memstore.New()}}
	st.downAtStart.Store(true)
	var before int64
	svc, s, _, _ := stepCancelledInAnOutage(t, st, func(ctx context.Context, svc *coordination.Service, s *coordination.Session) {
		// While the spend's record waits for the store, the other agent
		// answers and the team is finalized: the finished result is
		// recorded without the spend.
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.AgentIDs()[1]}); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Finalize(ctx, s.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		before = res.Usage.Input + res.Usage.Output
		st.loseUsage.Store(true)
	})
	if st.loseUsage.Load() {
		t.Fatal("the usage entry's answer was never lost: the test did not test the retry")
	}
	u := usageEntries(t, st, s.ID)
	if len(u) != 1 {
		t.Fatalf("%d usage entries, want 1: %+v", len(u), u)
	}
	res, err := svc.Result(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Usage.Input+res.Usage.Output, before+u[0].Usage.Tokens(); res.Status != coordination.StatusFinished || got != want {
		t.Errorf("the finished result (%s) counts %d tokens, want %d (%d before, and the usage entry's %d)", res.Status, got, want, before, u[0].Usage.Tokens())
	}
	// The timeline says the session finished once, and that its result
	// was amended.
	v, err := svc.Status(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range v.Timeline {
		kinds[e.Type]++
	}
	if kinds["finished"] != 1 || kinds["result_amended"] != 1 {
		t.Errorf("the timeline has %d finished and %d result_amended events, want one each: %+v", kinds["finished"], kinds["result_amended"], v.Timeline)
	}
}
