package pgstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// lostSessionLock is a replica whose session lock has passed to another
// holder without its knowing (a stall past the lock row's expiry, a
// database crash that emptied the unlogged locks table): LockSession lets
// it through without a row. Before its first session entry of one of
// kinds it calls before, which plays the second holder.
type lostSessionLock struct {
	*Store
	kinds  []coordination.SessionEntryKind
	once   sync.Once
	before func()
}

func (l *lostSessionLock) LockSession(ctx context.Context, id string) (func(), error) {
	return func() {}, nil
}

func (l *lostSessionLock) deciding(e coordination.SessionEntry) {
	if slices.Contains(l.kinds, e.Kind) {
		l.once.Do(l.before)
	}
}

func (l *lostSessionLock) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	l.deciding(e)
	return l.Store.AppendSession(ctx, id, e)
}

func (l *lostSessionLock) AppendSessionLeased(ctx context.Context, id string, version int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	l.deciding(e)
	return l.Store.AppendSessionLeased(ctx, id, version, e)
}

func (l *lostSessionLock) AppendSessionSinceRead(ctx context.Context, id string, version int64, read coordination.LogRead, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	l.deciding(e)
	return l.Store.AppendSessionSinceRead(ctx, id, version, read, e)
}

// TestACancelAcknowledgedWhileARunsLockWasLostIsKept: replica A's run
// reaches its timeout and decides the session's end on a read of its log,
// its session lock already lost; before its write lands, replica B takes
// the lock, records a cancel and tells its caller "cancelled". A's end,
// decided on a read without that cancel, is refused in its write
// (AppendSessionSinceRead) and made again from a fresh read, which finds
// the session cancelled: the session stays cancelled, as its user was
// told, and nothing decided or finished follows the cancel in its log.
// Without the fence A's end landed after the cancel and the session read
// failed (timeout), the acknowledged cancel overruled.
func TestACancelAcknowledgedWhileARunsLockWasLostIsKept(t *testing.T) {
	rs := replicas(t, 2)
	ctx := context.Background()
	other := coordination.NewService(rs[1], coordination.Options{})
	var acked *coordination.TeamResult
	var ackErr error
	runner := &lostSessionLock{Store: rs[0], kinds: []coordination.SessionEntryKind{
		coordination.SessionRevote, coordination.SessionDecided, coordination.SessionFinished}}
	h, s := silentTeam(t, runner)
	runner.before = func() { acked, ackErr = other.Cancel(ctx, s.ID) }
	var mu sync.Mutex
	var told []coordination.ProgressKind
	done, err := h.Service.Run(ctx, s.ID, func(p coordination.Progress) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, p.Kind)
	})
	if ackErr != nil || acked == nil || acked.Status != coordination.StatusCancelled {
		t.Fatalf("B's cancel, made as A decided = %+v, %v; want it acknowledged", acked, ackErr)
	}
	if err != nil {
		t.Fatalf("the run: %v", err)
	}
	if done.Status != coordination.StatusCancelled {
		t.Errorf("the run ended %s; B's cancel was acknowledged before A's end was written", done.Status)
	}
	mu.Lock()
	if slices.Contains(told, coordination.ProgressFinished) || !slices.Contains(told, coordination.ProgressCancelled) {
		t.Errorf("the run's caller was told %v; want cancelled, not finished", told)
	}
	mu.Unlock()
	st, err := other.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Result.Status != coordination.StatusCancelled {
		t.Errorf("the session reads %s; want cancelled, as its user was told", st.Result.Status)
	}
	l, err := rs[1].Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	cancelled := false
	for _, e := range l.Session {
		switch {
		case e.Kind == coordination.SessionCancelled:
			cancelled = true
		case cancelled && (e.Kind == coordination.SessionDecided || e.Kind == coordination.SessionFinished || e.Kind == coordination.SessionRevote):
			t.Errorf("a %s entry (seq %d) follows the acknowledged cancel", e.Kind, e.Seq)
		}
	}
	if !cancelled {
		t.Error("the session log holds no cancel")
	}
}

// silentTeam is a session of two agents whose models never answer, on a
// service over runner, whose run's timeout (1 s) ends it.
func silentTeam(t *testing.T, runner coordination.Store) (*coordtest.Harness, *coordination.Session) {
	t.Helper()
	held := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Free(), ctx.Err()
	})
	models := []string{"sim:seed=301", "sim:seed=302"}
	provs := map[string]providers.Provider{}
	for _, m := range models {
		sp, _ := providers.ParseSpec(m)
		provs[sp.String()] = held
	}
	h := &coordtest.Harness{T: t, Providers: provs}
	h.Service = coordination.NewService(runner, coordination.Options{Parallel: 2, Open: h.Open})
	s, err := h.Service.Create(context.Background(), coordination.TeamSpec{Task: "What is 2+2?", Models: models, Rules: coordination.Rules{TimeoutSeconds: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

// TestAResumeMadeWhileItsLockWasLostDoesNotLiftALaterCancel: replica A
// resumes a cancelled session, its session lock already lost; before its
// resume lands, replica B records a second cancel and says "cancelled".
// A's resume, read before that cancel, is refused in its write and lifts
// nothing: the run ends cancelled without a step. Without the fence the
// resume lifted the second cancel and the run went on to its timeout.
func TestAResumeMadeWhileItsLockWasLostDoesNotLiftALaterCancel(t *testing.T) {
	rs := replicas(t, 2)
	ctx := context.Background()
	other := coordination.NewService(rs[1], coordination.Options{})
	runner := &lostSessionLock{Store: rs[0], kinds: []coordination.SessionEntryKind{coordination.SessionResumed}}
	h, s := silentTeam(t, runner)
	if res, err := other.Cancel(ctx, s.ID); err != nil || res.Status != coordination.StatusCancelled {
		t.Fatalf("the first cancel = %+v, %v", res, err)
	}
	var acked *coordination.TeamResult
	var ackErr error
	runner.before = func() { acked, ackErr = other.Cancel(ctx, s.ID) }
	// Started by a service that did not create it (a client's resume), so
	// the run lifts the cancel it was asked over.
	starter := coordination.NewService(runner, coordination.Options{Parallel: 2, Open: h.Open})
	r, _, err := starter.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	done, err := r.Result()
	if ackErr != nil || acked == nil || acked.Status != coordination.StatusCancelled {
		t.Fatalf("B's second cancel, made as A resumed = %+v, %v; want it acknowledged", acked, ackErr)
	}
	if err != nil {
		t.Fatalf("the run: %v", err)
	}
	if done.Status != coordination.StatusCancelled || done.Steps != 0 {
		t.Errorf("the run ended %s with %d steps; B's second cancel was acknowledged before A's resume was written", done.Status, done.Steps)
	}
	l, err := rs[1].Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Session {
		if e.Kind == coordination.SessionResumed {
			t.Errorf("a resume (seq %d) was written over the second cancel", e.Seq)
		}
	}
}

// TestAFinishOnAReadACancelMadeStaleLeavesTheWriteContextAlone: as above,
// for a session whose winner changed a file of its write context, applied
// at the finish (apply: auto). B's cancel lands as A writes its finish,
// after A's last read: the winner's files are applied only once the finish
// has landed (autoApply), so A's refused finish leaves the project as the
// user left it when told "cancelled". Before, the files were applied
// before the finish was written, and a cancel in that window found them
// applied.
func TestAFinishOnAReadACancelMadeStaleLeavesTheWriteContextAlone(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	other := coordination.NewService(replicaWithFiles(t, dsn), coordination.Options{})
	runner := &lostSessionLock{Store: replicaWithFiles(t, dsn), kinds: []coordination.SessionEntryKind{coordination.SessionFinished}}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each agent answers once, writing a file, then never votes: the run's
	// timeout ends it with a winner, whose file the finish applies.
	var mu sync.Mutex
	answered := map[string]bool{}
	prov := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		mu.Lock()
		first := !answered[req.AgentID]
		answered[req.AgentID] = true
		mu.Unlock()
		if !first {
			<-ctx.Done()
			return providers.Action{}, providers.Free(), ctx.Err()
		}
		if err := os.WriteFile(filepath.Join(req.Workspace, "fixed.go"), []byte("package main // fixed\n"), 0o644); err != nil {
			return providers.Action{}, providers.Free(), err
		}
		return coordtest.Answer("fixed in fixed.go by " + req.AgentID), providers.Free(), nil
	})
	models := []string{"sim:seed=401", "sim:seed=402"}
	provs := map[string]providers.Provider{}
	for _, m := range models {
		sp, _ := providers.ParseSpec(m)
		provs[sp.String()] = prov
	}
	h := &coordtest.Harness{T: t, Providers: provs}
	h.Service = coordination.NewService(runner, coordination.Options{Parallel: 2, Open: h.Open})
	s, err := h.Service.Create(ctx, coordination.TeamSpec{Task: "Fix it", Models: models, Apply: coordination.ApplyAuto,
		// Long enough for both answers and their snapshots on a loaded
		// machine: the second calls wait for it anyway.
		Rules:    coordination.Rules{TimeoutSeconds: 6},
		Contexts: []workspace.Context{{Path: src, Permission: workspace.Write}}})
	if err != nil {
		t.Fatal(err)
	}
	var acked *coordination.TeamResult
	var ackErr error
	runner.before = func() { acked, ackErr = other.Cancel(ctx, s.ID) }
	done, err := h.Service.Run(ctx, s.ID, nil)
	if ackErr != nil || acked == nil || acked.Status != coordination.StatusCancelled {
		t.Fatalf("B's cancel, made as A decided = %+v, %v; want it acknowledged", acked, ackErr)
	}
	if err != nil {
		t.Fatalf("the run: %v", err)
	}
	if done.Status != coordination.StatusCancelled {
		t.Errorf("the run ended %s; want cancelled", done.Status)
	}
	if _, err := os.Stat(filepath.Join(src, "fixed.go")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the winner's file was applied to the write context of a session its user was told is cancelled (%v)", err)
	}
}

// lostLocks is a lostSessionLock whose run lock is lost too (a database
// crash empties every row of the unlogged locks table).
type lostLocks struct{ *lostSessionLock }

func (l *lostLocks) LockRun(ctx context.Context, id string) (func(), error) {
	return func() {}, nil
}

// TestAnEndGivenWhileAFinalizesLockWasLostIsNotReplaced: replica A
// finalizes a step-driven session, its locks already lost; before its end
// lands, replica B's finalize ends the session and gives its caller the
// result. A's end, decided on a read without B's, is refused in its write
// and made again from a fresh read, which finds the session ended: one
// end in the log, and both callers get the same result. Without the fence
// A's end landed second and replaced the result B's caller was given.
// With the final strategy "present", settle writes only the decision and
// the end is the final answer's (finishFinal), fenced by the same read.
func TestAnEndGivenWhileAFinalizesLockWasLostIsNotReplaced(t *testing.T) {
	for _, final := range []coordination.FinalStrategy{coordination.FinalWinner, coordination.FinalPresent} {
		t.Run(string(final), func(t *testing.T) {
			rs := replicas(t, 2)
			ctx := context.Background()
			other := coordination.NewService(rs[1], coordination.Options{Open: backends.Open})
			runner := &lostLocks{&lostSessionLock{Store: rs[0], kinds: []coordination.SessionEntryKind{coordination.SessionFinished}}}
			svc := coordination.NewService(runner, coordination.Options{Open: backends.Open})
			s := steppedSession(t, svc, final)
			var given *coordination.TeamResult
			var givenErr error
			runner.before = func() { given, givenErr = other.Finalize(ctx, s.ID, "") }
			got, err := svc.Finalize(ctx, s.ID, "")
			if givenErr != nil || given == nil || given.Status != coordination.StatusFinished {
				t.Fatalf("B's finalize, made as A ended the session = %+v, %v; want it finished", given, givenErr)
			}
			if err != nil {
				t.Fatalf("A's finalize: %v", err)
			}
			if n := sessionEntries(t, rs[1], s.ID, coordination.SessionFinished); n != 1 {
				t.Errorf("%d finished entries in the log; want B's end alone", n)
			}
			if got.Status != given.Status || coordtest.JSON(got.Winner) != coordtest.JSON(given.Winner) ||
				coordtest.JSON(got.FinalAnswer) != coordtest.JSON(given.FinalAnswer) {
				t.Errorf("A's finalize returned %s; B's caller was given %s", coordtest.JSON(got), coordtest.JSON(given))
			}
		})
	}
}

// TestACancelReadBeforeADecisionDoesNotStopItsFinalAnswer: a cancel read
// before the session was decided and written after (its lock lost) leaves
// the session decided, as Cancel then says; the final answer is still
// written, fenced by the ends alone: no cancel stops a decided session.
func TestACancelReadBeforeADecisionDoesNotStopItsFinalAnswer(t *testing.T) {
	rs := replicas(t, 2)
	ctx := context.Background()
	runner := &lostSessionLock{Store: rs[0], kinds: []coordination.SessionEntryKind{coordination.SessionFinished}}
	svc := coordination.NewService(runner, coordination.Options{Open: backends.Open})
	s := steppedSession(t, svc, coordination.FinalPresent)
	var staleErr error
	runner.before = func() {
		// The stale canceller's write, its read from before the decision.
		_, staleErr = rs[1].AppendSession(ctx, s.ID, coordination.SessionEntry{Kind: coordination.SessionCancelled, Time: time.Now(), Reason: "by request"})
	}
	got, err := svc.Finalize(ctx, s.ID, "")
	if staleErr != nil {
		t.Fatal(staleErr)
	}
	if err != nil {
		t.Fatalf("the finalize: %v", err)
	}
	if got.Status != coordination.StatusFinished || got.FinalAnswer == nil {
		t.Errorf("the finalize returned %s with final answer %v; want it finished with its answer", got.Status, got.FinalAnswer)
	}
	if n := sessionEntries(t, rs[1], s.ID, coordination.SessionFinished); n != 1 {
		t.Errorf("%d finished entries in the log; want the final answer's", n)
	}
}

// steppedSession is a step-driven session of two sim agents, each stepped
// once, whose final strategy is final.
func steppedSession(t *testing.T, svc *coordination.Service, final coordination.FinalStrategy) *coordination.Session {
	t.Helper()
	ctx := context.Background()
	seed := int64(5)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim/strong"}, Seed: &seed,
		Driver: coordination.DriverStep, Rules: coordination.Rules{Final: final}})
	if err != nil {
		t.Fatal(err)
	}
	for _, agent := range s.AgentIDs() {
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
			t.Fatalf("%s's step: %v", agent, err)
		}
	}
	return s
}

// sessionEntries counts session id's log entries of kind.
func sessionEntries(t *testing.T, st *Store, id string, kind coordination.SessionEntryKind) int {
	t.Helper()
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range l.Session {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
