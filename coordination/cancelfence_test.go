package coordination_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"

	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// A cancel acknowledged is a cancel kept, in one process (two services over
// one memory store) and across processes (two file stores on one
// directory); coordination/pgstore plays it across replicas.
func TestAnAcknowledgedCancelIsKept(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memstore.New()
		coordtest.CancelKept(t, st, st)
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		coordtest.CancelKept(t, filestore.New(dir), filestore.New(dir))
	})
}

// A session whose run died reads interrupted once its lease has expired,
// never running for ever (coordination/pgstore plays it on a database).
func TestADeadRunReadsInterruptedOnceItsLeaseExpires(t *testing.T) {
	t.Run("memory", func(t *testing.T) { coordtest.DeadHolderReadsInterrupted(t, memstore.New()) })
	t.Run("files", func(t *testing.T) { coordtest.DeadHolderReadsInterrupted(t, filestore.New(t.TempDir())) })
}

// A session whose creator stopped before its run began reads interrupted
// once NeverStartedGrace has passed, and is resumed to its end, in one
// process (two services over one memory store) and across a restart (two
// file stores on one directory); coordination/pgstore plays it across
// replicas.
func TestASessionWhoseCreatorDiedBeforeItsRunReadsInterrupted(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memstore.New()
		coordtest.NeverStartedReadsInterrupted(t, st, st)
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		coordtest.NeverStartedReadsInterrupted(t, filestore.New(dir), filestore.New(dir))
	})
}

// A session created for a run whose creation outlasts NeverStartedGrace
// is not read interrupted, listed or resumed while its creator still
// creates it, nor just after: the grace counts from the end of Create; in
// one process (two services over one memory store) and across processes
// (two file stores on one directory); coordination/pgstore plays it across
// replicas.
func TestASessionWhoseCreationOutlastsTheGraceIsNotTakenUp(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memstore.New()
		coordtest.SlowCreationIsNotTakenUp(t, st, st, nil)
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		coordtest.SlowCreationIsNotTakenUp(t, filestore.New(dir), filestore.New(dir), nil)
	})
}

// TestACancelOfASessionJustCreatedForARunIsKept: `run` creates its session
// and then starts it; a cancel from another process landing in between (the
// session exists, the run has not counted cancels yet) came after the run
// was asked for, and stops it rather than being lifted by it.
func TestACancelOfASessionJustCreatedForARunIsKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	models, _, provs := coordtest.Team(t, 2)
	h := &coordtest.Harness{T: t, Providers: provs}
	h.Service = coordination.NewService(filestore.New(dir), coordination.Options{Parallel: 2, Open: h.Open})
	other := coordination.NewService(filestore.New(dir), coordination.Options{Open: h.Open})
	seed := int64(1)
	s, err := h.Service.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: models, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := other.Cancel(ctx, s.ID); err != nil || res.Status != coordination.StatusCancelled {
		t.Fatalf("the cancel = %+v, %v; want cancelled", res, err)
	}
	res, err := h.Service.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordination.StatusCancelled || res.Steps != 0 {
		t.Errorf("the run ended %s with %d steps; the cancel was acknowledged at 0 steps", res.Status, res.Steps)
	}
	// A later resume, asked for after the cancel, lifts it.
	if res, err := h.Service.Run(ctx, s.ID, nil); err != nil || res.Status != coordination.StatusFinished {
		t.Errorf("the resume after the cancel = %+v, %v; want finished", res, err)
	}
}

// TestARetriedLandingThatHadLandedBeforeACancelIsNotRefusedAsCancelled: a
// landing without a LeasedLanding (a host's step) retried after its answer
// was lost at the commit finds a cancel recorded since; the step had
// landed, so the fence lets the append find it stored rather than refusing
// it as cancelled mid-step, while a first attempt, and a step that had not
// landed, are still refused. (coordination/pgstore plays the whole retry.)
func TestARetriedLandingThatHadLandedBeforeACancelIsNotRefusedAsCancelled(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	models, _, provs := coordtest.Team(t, 2)
	h := &coordtest.Harness{T: t, Providers: provs}
	svc := coordination.NewService(st, coordination.Options{Open: h.Open})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: models, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := st.LockStep(ctx, s.ID, "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Agent: "agent_a", Content: "4", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if res, err := svc.Cancel(ctx, s.ID); err != nil || res.Status != coordination.StatusCancelled {
		t.Fatalf("the cancel = %+v, %v; want cancelled", res, err)
	}
	defer lock.Release()
	unlock, err := coordination.LockLanding(svc, ctx, s.ID, "agent_a", lock.Step(), 0, true)
	if err != nil {
		t.Fatalf("the retried fence of a step that landed before the cancel: %v; want it let through to find its entry", err)
	}
	unlock()
	if _, err := coordination.LockLanding(svc, ctx, s.ID, "agent_a", lock.Step(), 0, false); !errors.Is(err, coordination.ErrNotNext) {
		t.Fatalf("a first attempt's fence, after a cancel: %v; want it refused as cancelled mid-step (only a retry can have landed)", err)
	}
	if _, err := coordination.LockLanding(svc, ctx, s.ID, "agent_b", 1, 0, true); !errors.Is(err, coordination.ErrNotNext) {
		t.Fatalf("the retried fence of a step that had not landed, after a cancel: %v; want it refused as cancelled mid-step", err)
	}
}

// A run retried in another process after its creator died (run_team
// asked again with the session's id), before its creation ended or after,
// reads running while that process starts it, is taken up by no resume,
// and ends finished: in one process (services over one memory store) and
// across processes (file stores on one directory); coordination/pgstore
// plays it across replicas (coordtest.RetriedCreationReadsRunning).
func TestARunRetriedAfterItsCreatorDiedReadsRunning(t *testing.T) {
	for _, cut := range []bool{true, false} {
		name := map[bool]string{true: "cut short", false: "created"}[cut]
		t.Run(name+"/memory", func(t *testing.T) {
			st := memstore.New()
			coordtest.RetriedCreationReadsRunning(t, st, st, st, cut)
		})
		t.Run(name+"/files", func(t *testing.T) {
			dir := t.TempDir()
			coordtest.RetriedCreationReadsRunning(t, filestore.New(dir), filestore.New(dir), filestore.New(dir), cut)
		})
	}
}

// A run retried in another process after the process that created it and
// claimed its run died before a step landed is a resume, not a creation
// taken over: refused, it stays interrupted; on a memory store and on
// file stores (coordtest.RetriedAfterItsRunDiedIsAResume).
func TestARunRetriedAfterItsRunDiedIsAResume(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memstore.New()
		coordtest.RetriedAfterItsRunDiedIsAResume(t, st, st, st)
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		coordtest.RetriedAfterItsRunDiedIsAResume(t, filestore.New(dir), filestore.New(dir), filestore.New(dir))
	})
}

// A session created with its criteria call's spend whose creator died
// before its run reads interrupted and is resumed, on a memory store and
// on file stores (coordtest.CriteriaSpendCreatorGoneReadsInterrupted).
func TestASessionCreatedWithItsCriteriaSpendWhoseCreatorDiedReadsInterrupted(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memstore.New()
		coordtest.CriteriaSpendCreatorGoneReadsInterrupted(t, st, st)
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		coordtest.CriteriaSpendCreatorGoneReadsInterrupted(t, filestore.New(dir), filestore.New(dir))
	})
}
