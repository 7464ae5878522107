package coordination_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAResumeThatKeepsFailingWaitsBeforeTheNext: an interrupted session
// whose resume fails (a host agent, which no server run can step) is not
// claimed again at every look once its lease expires: each claim wrote a
// "resumed" event and a warning, every few seconds, for ever. The first
// few failures are tried again at once (one may be passing).
func TestAResumeThatKeepsFailingWaitsBeforeTheNext(t *testing.T) {
	st := memstore.New()
	opts := coordination.Options{Open: backends.Open, Logger: zerolog.Nop(), RunHeartbeat: 10 * time.Millisecond, RunLeaseTTL: 50 * time.Millisecond}
	// Two replicas: each takes over the lease the other's failed try left.
	replicas := []*coordination.Service{coordination.NewService(st, opts), coordination.NewService(st, opts)}
	svc := replicas[0]
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Driver: coordination.DriverStep,
		Agents: []coordination.Agent{{ID: "me", Model: "host"}, {ID: "agent_a", Model: "sim"}}})
	if err != nil {
		t.Fatal(err)
	}
	// A run that died holding it.
	if _, err := st.AcquireRun(ctx, s.ID, coordination.LeaseOwner{ID: "dead-run", Host: coordination.ThisHost(), PID: 1}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		time.Sleep(80 * time.Millisecond) // the lease the last try left expires
		if resumed, err := replicas[i%2].ResumeInterrupted(ctx, nil); err != nil || len(resumed) != 0 {
			t.Fatalf("resumed %v, %v; want the session's resume to fail", resumed, err)
		}
	}
	view, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	tries := 0
	for _, ev := range view.Timeline {
		if ev.Type == "resumed" {
			tries++
		}
	}
	if tries != 6 {
		t.Fatalf("the failing resume was tried %d times in ten looks of two replicas; want three by each (a failure may be passing), then a wait", tries)
	}
	if view.Result == nil || view.Result.Status != coordination.StatusInterrupted {
		t.Fatalf("the session reads %+v, want interrupted", view.Result)
	}
	// The host steps: a person's or an outer agent's step says nothing of a
	// run elsewhere, and the waits stand. Then a step of the agent a run
	// steps lands (a run elsewhere took the session up, and it was
	// interrupted again): the failures are of another time, and each
	// replica tries it again at once.
	land := func(agent string) {
		lock, err := st.LockStep(ctx, s.ID, agent)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lock.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Agent: agent, Content: "4", Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
		lock.Release()
	}
	resumes := func() int {
		for i := range 2 {
			time.Sleep(80 * time.Millisecond)
			if _, err := replicas[i].ResumeInterrupted(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		view, err := svc.Status(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		n := -tries
		for _, ev := range view.Timeline {
			if ev.Type == "resumed" {
				n++
			}
		}
		return n
	}
	land("me")
	if again := resumes(); again != 0 {
		t.Fatalf("after the host stepped, the session was tried %d more times; want the waits to stand", again)
	}
	land("agent_a")
	again := resumes()
	if again != 2 {
		t.Fatalf("after a step landed, the session was tried %d times by two replicas; want once by each, at once", again)
	}
}
