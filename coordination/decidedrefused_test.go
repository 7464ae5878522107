package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// refuseFinished refuses every finished entry with an error that stands
// (not an outage): a full disk, a statement timeout.
type refuseFinished struct {
	*memstore.Store
}

var errNoSpace = errors.New("test: no space left on device")

func (s *refuseFinished) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if e.Kind == coordination.SessionFinished {
		return e, errNoSpace
	}
	return s.Store.AppendSession(ctx, id, e)
}

func (s *refuseFinished) AppendSessionLeased(ctx context.Context, id string, v int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if e.Kind == coordination.SessionFinished {
		return e, errNoSpace
	}
	return s.Store.AppendSessionLeased(ctx, id, v, e)
}

// A decided session whose finish is refused by an error that stands must
// come to read interrupted (its lease left to expire), for a run taken up
// again to write its answer, on every way a run ends: before, the
// timeout's finish and a finish after a stop during the final call
// released the lease, and the session read decided for ever with nothing
// to write its answer (found by review).
func TestARefusedFinishLeavesADecidedSessionToBeTakenUp(t *testing.T) {
	for _, tc := range []struct {
		name       string
		blockFinal bool // the final call waits until the run is stopped
		rules      coordination.Rules
	}{
		// The timeout decides (one answer, the others never reply), and
		// its finish is refused.
		{"timeout", false, coordination.Rules{Final: coordination.FinalPresent, TimeoutSeconds: 1}},
		// The run is stopped (a shutdown) while the final call is pending,
		// and the winner's answer is refused.
		{"stopped during the final call", true, coordination.Rules{Final: coordination.FinalPresent}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &refuseFinished{Store: memstore.New()}
			var steps atomic.Int32
			finalStarted := make(chan struct{}, 1)
			svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), RunHeartbeat: 20 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond,
				Open: func(sp providers.Spec) (providers.Provider, error) {
					return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
						if req.Purpose != providers.PurposeStep {
							if tc.blockFinal {
								finalStarted <- struct{}{}
								<-ctx.Done()
								return providers.Action{}, providers.Usage{}, context.Cause(ctx)
							}
							return coordtest.Answer("final"), providers.Usage{}, nil
						}
						if tc.blockFinal || steps.Add(1) == 1 {
							if len(req.Shown) > 0 {
								return coordtest.Vote(req.Shown[0].Alias), providers.Usage{}, nil
							}
							return coordtest.Answer("Answer: 4"), providers.Usage{}, nil
						}
						<-ctx.Done()
						return providers.Action{}, providers.Usage{}, context.Cause(ctx)
					}), nil
				}})
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Rules: tc.rules})
			if err != nil {
				t.Fatal(err)
			}
			if tc.blockFinal {
				go func() {
					<-finalStarted
					stop()
				}()
			}
			_, err = svc.Run(ctx, s.ID, nil)
			if !errors.Is(err, errNoSpace) {
				t.Fatalf("run: %v; want the refused finish", err)
			}
			time.Sleep(400 * time.Millisecond) // past the lease's TTL
			res, err := svc.Result(context.Background(), s.ID)
			if err != nil {
				t.Fatal(err)
			}
			l, _ := st.ReadRun(context.Background(), s.ID)
			if res.Status != coordination.StatusInterrupted {
				t.Fatalf("status %s (lease released %v); want %s: a decided session nothing runs must be taken up to write its answer", res.Status, l != nil && l.Released, coordination.StatusInterrupted)
			}
		})
	}
}

// TestADecidedSessionWhoseFinishIsRefusedIsNotPaidForAtEveryLook: a
// decided session whose finish an error that stands refuses reads
// interrupted, and a replica resuming those takes it up; each take-up
// makes its final call again. Its refused finishes count as failed
// resumes, so after resumeFreeTries the replica waits a minute before it
// pays again, where it took it up at every look (found by review).
func TestADecidedSessionWhoseFinishIsRefusedIsNotPaidForAtEveryLook(t *testing.T) {
	st := &refuseFinished{Store: memstore.New()}
	var finals atomic.Int32
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), RunHeartbeat: 20 * time.Millisecond, RunLeaseTTL: 100 * time.Millisecond,
		Open: func(sp providers.Spec) (providers.Provider, error) {
			return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				if req.Purpose != providers.PurposeStep {
					finals.Add(1)
					return coordtest.Answer("final"), providers.Usage{}, nil
				}
				if len(req.Shown) > 0 {
					return coordtest.Vote(req.Shown[0].Alias), providers.Usage{}, nil
				}
				return coordtest.Answer("Answer: 4"), providers.Usage{}, nil
			}), nil
		}})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(ctx, s.ID, nil); !errors.Is(err, errNoSpace) {
		t.Fatalf("run: %v; want the refused finish", err)
	}
	looks := 0
	for range 8 {
		time.Sleep(300 * time.Millisecond) // past the lease's TTL
		ids, err := svc.ResumeInterrupted(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			continue
		}
		looks++
		if r, ok := svc.Running(s.ID); ok {
			<-r.Done()
		}
	}
	if n := finals.Load(); n > 3 || looks == 0 {
		t.Fatalf("%d final calls over %d take-ups in 8 looks; want the take-ups to stop after the free tries (3 calls at most)", n, looks)
	}
}
