package coordination_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
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
			s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"openai/a", "openai/b"}, Driver: coordination.DriverStep,
				Rules: coordination.Rules{StepTimeoutSeconds: 1.5}})
			if err != nil {
				t.Fatal(err)
			}
			agent := s.Agents[0].ID
			// A try on a process that then died: claimed, renewed tc.tried
			// later, never released.
			dead := coordination.LeaseOwner{ID: "dead", Host: coordination.ThisHost(), PID: 1 << 22}
			l, err := st.AcquireStep(ctx, s.ID, agent, dead, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(tc.tried)
			if _, err := st.RenewStep(ctx, s.ID, agent, l.Version, time.Millisecond); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
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
