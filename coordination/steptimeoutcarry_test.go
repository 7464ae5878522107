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
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAStepsTimeoutBindsAcrossATakeover: a step taken over from a try
// whose process died mid-step (its step lease left unreleased) has only
// what that try left of step_timeout_seconds, as a retry in one process
// has; a try that used it all leaves the model uncalled. Before, every
// takeover started the step's timeout again. A try that landed its step
// (its lease's release lost) was an earlier step's: the next has its
// whole timeout.
func TestAStepsTimeoutBindsAcrossATakeover(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tried  time.Duration // the dead try's time
		landed bool          // the dead try landed its step, its release lost
		calls  int32
		took   [2]time.Duration // the step's time, at least and at most
		says   string
	}{
		{"part of it used", 800 * time.Millisecond, false, 1, [2]time.Duration{0, 1250 * time.Millisecond}, "s of it on earlier tries whose processes stopped answering): "},
		{"all of it used", 1600 * time.Millisecond, false, 0, [2]time.Duration{0, time.Second}, "s of it on earlier tries whose processes stopped answering): "},
		{"the try landed an earlier step", time.Second, true, 1, [2]time.Duration{1400 * time.Millisecond, time.Minute}, "1.5 s (step_timeout_seconds): "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memstore.New()
			var calls atomic.Int32
			stall := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				calls.Add(1)
				<-ctx.Done()
				return providers.Action{}, providers.Usage{}, ctx.Err()
			})
			svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) { return stall, nil }})
			ctx := context.Background()
			s := pairStepping(t, svc, coordination.Rules{StepTimeoutSeconds: 1.5})
			agent := s.Agents[0].ID
			leaveTry(t, st, s.ID, agent, leftTry{tried: tc.tried})
			if tc.landed { // its entry in, its lease never released
				lock, err := st.LockStep(ctx, s.ID, agent)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := lock.Append(ctx, coordination.Entry{Agent: agent, Kind: coordination.KindError, Class: providers.ClassProvider, Message: "a step that landed", Time: time.Now()}); err != nil {
					t.Fatal(err)
				}
				lock.Release()
			}

			t0 := time.Now()
			res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent})
			took := time.Since(t0)
			if err != nil {
				t.Fatal(err)
			}
			if took < tc.took[0] || took > tc.took[1] {
				t.Errorf("the step taken over ran %v of a 1.5 s timeout, the dead try's %v before it; want %v to %v", took.Round(time.Millisecond), tc.tried, tc.took[0], tc.took[1])
			}
			if n := calls.Load(); n != tc.calls {
				t.Errorf("the model was called %d times, want %d", n, tc.calls)
			}
			if res.Action != "error" || res.ErrorClass != string(providers.ClassTimeout) || !strings.Contains(res.Message, tc.says) {
				t.Errorf("the step: %s %s %q; want a timeout that says %q", res.Action, res.ErrorClass, res.Message, tc.says)
			}
		})
	}
}

// pairStepping creates, through svc, a step-driven session of two agents
// (openai/a and openai/b) under rules.
func pairStepping(t *testing.T, svc *coordination.Service, rules coordination.Rules) *coordination.Session {
	t.Helper()
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"openai/a", "openai/b"}, Driver: coordination.DriverStep, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// leftTry is a try of an agent's step on another process: its owner
// ("dead" when ""), how long it ran, the calls its guard decided (put
// under its claim's version), and how it ended: its lease released (a
// cancelled call) or not (its process died).
type leftTry struct {
	owner    string
	tried    time.Duration
	decided  []permissions.Record
	released bool
}

// stepsAndDecisions is a store with step leases and a permission log.
type stepsAndDecisions interface {
	coordination.StepLeaseStore
	coordination.PermissionLog
}

// leaveTry leaves agent's step lease as try left it: claimed, its calls
// decided under the claim's version, renewed try.tried later, then
// released or left to expire unreleased. It returns the lease.
func leaveTry(t *testing.T, st stepsAndDecisions, id, agent string, try leftTry) coordination.RunLease {
	t.Helper()
	ctx := context.Background()
	if try.owner == "" {
		try.owner = "dead"
	}
	l, err := st.AcquireStep(ctx, id, agent, coordination.LeaseOwner{ID: try.owner, Host: coordination.ThisHost(), PID: 1 << 22}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range try.decided {
		r.Lease, r.Time = l.Version, time.Now()
		if err := st.AppendPermission(ctx, id, r); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(try.tried)
	if try.released {
		if err := st.ReleaseStep(ctx, id, agent, l.Version); err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l, err = st.RenewStep(ctx, id, agent, l.Version, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	return l
}

// TestAStepWhoseLeaseWasNotReleasedLeavesTheNextItsWholeTimeout: a step
// that landed but whose lease's release was refused (a full disk) is
// logged, and the agent's next step, which claims over that lease, has its
// whole step_timeout_seconds: the lease was its own, and that try landed.
func TestAStepWhoseLeaseWasNotReleasedLeavesTheNextItsWholeTimeout(t *testing.T) {
	st := &refusedRelease{Store: memstore.New()}
	var calls atomic.Int32
	reply := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if calls.Add(1) <= 2 { // each agent's first step
			time.Sleep(300 * time.Millisecond)
			return coordtest.Answer("Answer: 391"), providers.Free(), nil
		}
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	logged := &coordtest.SyncBuffer{}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.New(logged), RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond,
		Open: func(providers.Spec) (providers.Provider, error) { return reply, nil }})
	ctx := context.Background()
	s := pairStepping(t, svc, coordination.Rules{StepTimeoutSeconds: 1.5})
	a, b := s.Agents[0].ID, s.Agents[1].ID
	for _, agent := range []string{a, b} {
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(logged.String(), "could not release a step's lease") {
		t.Errorf("a refused release was not logged: %s", logged.String())
	}
	time.Sleep(400 * time.Millisecond) // the unreleased lease expires
	t0 := time.Now()
	res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: a})
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if took < 1400*time.Millisecond || strings.Contains(res.Message, "earlier tries") {
		t.Errorf("the step after one whose release was refused ran %v (%q); want its whole 1.5 s timeout", took.Round(time.Millisecond), res.Message)
	}
}

// refusedRelease is a store that refuses the first step lease release, as
// a full disk would.
type refusedRelease struct {
	*memstore.Store
	refused atomic.Bool
}

func (s *refusedRelease) ReleaseStep(ctx context.Context, id, agent string, version int64) error {
	if s.refused.CompareAndSwap(false, true) {
		return errors.New("writing the step lease: no space left on device")
	}
	return s.Store.ReleaseStep(ctx, id, agent, version)
}
