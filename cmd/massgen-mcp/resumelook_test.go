package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestServeResumingInterruptedRunsLooksAgainOnceTheGraceHasPassed: serve
// --resume-interrupted on a file store (not shared by replicas, so no
// look every second) takes up a session the process before it created for
// a run and died before starting: its first look, as it starts, finds the
// session within coordination.NeverStartedGrace (running, its run perhaps
// about to start) and leaves it; its second look, once the grace has
// passed, finds it interrupted and runs it to its end.
func TestServeResumingInterruptedRunsLooksAgainOnceTheGraceHasPassed(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	s, err := killed.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var passed time.Duration
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(passed) }
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open, Now: clock})
	// Before the directory goes: the resumed run's last writes (its lease,
	// its status) may follow its finished result, and so may the first
	// service's status write after its creation.
	t.Cleanup(func() {
		sctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		for _, sv := range []*coordination.Service{svc, killed} {
			_ = sv.Shutdown(sctx)
			for sv.StatusWritesPending() > 0 && sctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
	waits, fire, done := resumeLooks(ctx, svc, mcp.DefaultTenant, nil, always)

	var wait time.Duration
	select {
	case wait = <-waits:
	case <-done:
		t.Fatal("the server resuming interrupted runs on a file store looked once and never again")
	case <-time.After(10 * time.Second):
		t.Fatal("the server resuming interrupted runs on a file store never arranged its second look")
	}
	if want := coordination.NeverStartedGrace + coordination.MaxClockSkew; wait != want {
		t.Errorf("the second look is %v after the first, want %v (the grace and the clocks' skew)", wait, want)
	}
	if _, ok := svc.Running(s.ID); ok {
		t.Fatal("the first look took up a session still within the grace")
	}
	if v, err := svc.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusRunning {
		t.Fatalf("before the second look the session reads %+v (%v), want running", v, err)
	}

	mu.Lock()
	passed = wait
	mu.Unlock()
	fire <- time.Now()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the second look did not end")
	}
	// The resumed run may have ended already: its result says it ran.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		res, err := svc.Result(ctx, s.ID)
		if err == nil && res.Status == coordination.StatusFinished {
			break
		}
		if time.Now().After(deadline) {
			got := "nothing"
			if res != nil {
				got = res.Status
			}
			t.Fatalf("the second look did not run the session its creator never started to its end: it reads %s (%v)", got, err)
		}
	}
}
