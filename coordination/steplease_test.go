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
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// stallingStore is a memory store whose step renewals fail (as on a full
// disk, not with ErrLeaseLost) once stalled is set, so the step's lease
// expires while its holder lives and another process can claim it.
type stallingStore struct {
	*memstore.Store
	stalled atomic.Bool
}

func (s *stallingStore) RenewStep(ctx context.Context, id, agent string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	if s.stalled.Load() {
		return coordination.RunLease{}, errors.New("dummy: no space left on device")
	}
	return s.Store.RenewStep(ctx, id, agent, version, ttl)
}

// stepTeam is a step-driven session (no run, so no run lease) of two sim
// agents whose steps take latency.
func stepTeam(t *testing.T, st coordination.Store, latency string) (*coordination.Service, *coordination.Session) {
	t.Helper()
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, RunHeartbeat: 10 * time.Millisecond, RunLeaseTTL: 40 * time.Millisecond})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=" + latency, "sim:latency=" + latency}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s
}

func agentRow(t *testing.T, v *coordination.StatusView, id string) coordination.AgentStatus {
	t.Helper()
	for _, a := range v.Agents {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("no row for %s in %+v", id, v.Agents)
	return coordination.AgentStatus{}
}

// TestAnAbandonedStepReadsInterruptedInAStepDrivenSession: a step whose
// process died mid-call (its lease never renewed nor released) shows on its
// agent's row as interrupted, with when it was last alive, though the
// session has no run lease; the other agent's row is untouched.
func TestAnAbandonedStepReadsInterruptedInAStepDrivenSession(t *testing.T) {
	st := memstore.New()
	svc, s := stepTeam(t, st, "1ms")
	ctx := context.Background()
	dead, other := s.AgentIDs()[0], s.AgentIDs()[1]
	l, err := st.AcquireStep(ctx, s.ID, dead, coordination.LeaseOwner{ID: "dead-process", Host: coordination.ThisHost(), PID: 1}, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := svc.Status(ctx, s.ID); agentRow(t, v, dead).Status == coordination.StatusInterrupted {
		t.Fatalf("a step whose lease is held reads interrupted")
	}
	time.Sleep(60 * time.Millisecond)
	for name, read := range map[string]func(context.Context, string) (*coordination.StatusView, error){"Status": svc.Status, "Inspect": svc.Inspect} {
		v, err := read(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		row := agentRow(t, v, dead)
		if row.Status != coordination.StatusInterrupted || row.LastAlive == nil || !row.LastAlive.Equal(l.Renewed) {
			t.Errorf("%s: row of the agent whose step died = %q last alive %v; want interrupted, last alive %v", name, row.Status, row.LastAlive, l.Renewed)
		}
		if row := agentRow(t, v, other); row.Status == coordination.StatusInterrupted || row.LastAlive != nil {
			t.Errorf("%s: the other agent's row = %q, %v; want it untouched", name, row.Status, row.LastAlive)
		}
		if v.Result.Status != coordination.StatusRunning {
			t.Errorf("%s: a step-driven session reads %q, want running", name, v.Result.Status)
		}
	}
	// Stepping the agent again claims the abandoned lease and clears it.
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: dead}); err != nil {
		t.Fatalf("stepping the agent again: %v", err)
	}
	if v, _ := svc.Status(ctx, s.ID); agentRow(t, v, dead).Status == coordination.StatusInterrupted {
		t.Errorf("after the agent stepped again its row still reads interrupted")
	}
}

// TestAStepHoldsItsLeaseWhileItsModelRunsAndReleasesIt: during the model
// call the step's lease is renewed by heartbeats (it outlives several TTLs);
// when the step lands the lease is released.
func TestAStepHoldsItsLeaseWhileItsModelRunsAndReleasesIt(t *testing.T) {
	st := memstore.New()
	svc, s := stepTeam(t, st, "600ms")
	ctx := context.Background()
	agent := s.AgentIDs()[0]
	done := make(chan error, 1)
	go func() {
		_, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent})
		done <- err
	}()
	// Its renewals, not only its step lock, say so: the lease is read until
	// it shows a heartbeat several lease lifetimes (40 ms) after its claim,
	// unreleased, in the 600 ms call. Progress, not a moment: a fixed sleep
	// then one read could fail whenever a loaded machine held a heartbeat
	// past the TTL at that instant. A step without its heartbeat is never
	// renewed after its claim, and this times out.
	var ls map[string]*coordination.RunLease
	var err error
	if !coordination.Eventually(10*time.Second, func() bool {
		ls, err = st.ReadSteps(ctx, s.ID)
		l := ls[agent]
		return err == nil && l != nil && !l.Released && l.PID != 0 &&
			l.Renewed.Sub(l.Claimed) >= 150*time.Millisecond && l.Expires.After(l.Renewed)
	}) {
		t.Fatalf("step lease during the model call = %+v, %v; want held by this process and renewed", ls[agent], err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ls, _ := st.ReadSteps(ctx, s.ID); ls[agent] == nil || !ls[agent].Released {
		t.Errorf("step lease after landing = %+v, want released", ls[agent])
	}
}

// deafModel answers after d whatever its context says, with some spend: a
// provider slow to notice its call was stopped.
func deafModel(d time.Duration) providers.Provider {
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		time.Sleep(d)
		c := 0.01
		return coordtest.Answer("Answer: 4"), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
	})
}

// TestAStepWhoseLeaseWasLostIsNotRecorded: a step whose lease another
// process claimed while its model ran (its renewals failing, the lease
// expired) is fenced: its landing is refused with ErrLeaseLost and no step
// is written; what its model spent is the session's, a usage entry. (The
// step's call is stopped once its lease may have run out; this model
// answers all the same, as one slow to notice would.)
func TestAStepWhoseLeaseWasLostIsNotRecorded(t *testing.T) {
	st := &stallingStore{Store: memstore.New()}
	// The model's call is long (2 s) beside the lease's 40 ms: the other
	// process must claim the expired lease while the call runs, and under
	// -race on a loaded machine its goroutine can wait a few hundred
	// milliseconds to be scheduled.
	svc := coordination.NewService(st, coordination.Options{RunHeartbeat: 10 * time.Millisecond, RunLeaseTTL: 40 * time.Millisecond,
		Open: func(providers.Spec) (providers.Provider, error) { return deafModel(2 * time.Second), nil }})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	agent := s.AgentIDs()[0]
	st.stalled.Store(true)
	claimed := make(chan error, 1)
	go func() {
		// Another process claims the step once its lease, taken by the
		// step, has expired.
		for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
			if ls, _ := st.ReadSteps(ctx, s.ID); ls[agent] == nil {
				continue
			}
			_, err := st.AcquireStep(ctx, s.ID, agent, coordination.LeaseOwner{ID: "other-process", Host: "other-host.invalid", PID: 1}, time.Minute)
			if err == nil || !errors.Is(err, coordination.ErrAgentBusy) {
				claimed <- err
				return
			}
		}
		claimed <- errors.New("the step's lease never expired")
	}()
	_, err = svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent})
	if cerr := <-claimed; cerr != nil {
		t.Fatalf("the other process's claim: %v", cerr)
	}
	if !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("step whose lease was claimed by another process = %v, want ErrLeaseLost", err)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if row := agentRow(t, v, agent); row.Steps != 0 || row.Answers != 0 {
		t.Errorf("after a fenced step the agent has %d steps, %d answers; want nothing written", row.Steps, row.Answers)
	}
	if u := usageEntries(t, st, s.ID); len(u) != 1 || u[0].Usage.Tokens() == 0 || !strings.Contains(u[0].Reason, "fenced") {
		t.Errorf("usage entries after a fenced step: %+v; want one with its model's spend", u)
	}
}

// TestALostLeaseSaysWhoseLeaseItWas: the rules' errors name the lease (a
// run's, or an agent's step) and the claim, though the name is formatted
// only when an error says it.
func TestALostLeaseSaysWhoseLeaseItWas(t *testing.T) {
	now := time.Now()
	owner := coordination.ThisProcess("x")
	run, err := coordination.ClaimLease("s1", nil, owner, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		err  error
		want string
	}{
		{second(coordination.RenewLease("s1", &run, run.Version+1, now, time.Minute)), `session "s1": its run: claim 2 is no longer current`},
		{second(coordination.ReleaseStepLease("s1", "a", &run, run.Version+1, now)), `session "s1": the step of agent "a": claim 2 is no longer current`},
	}
	released, err := coordination.ReleaseLease("s1", &run, run.Version, now)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		err  error
		want string
	}{second(coordination.RenewStepLease("s1", "b", &released, run.Version, now, time.Minute)), `session "s1": the step of agent "b": claim 1 was released`})
	for _, c := range cases {
		if !errors.Is(c.err, coordination.ErrLeaseLost) || c.err == nil || !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("got %v; want %q… (ErrLeaseLost)", c.err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }
