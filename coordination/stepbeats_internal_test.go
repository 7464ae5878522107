package coordination

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// countingSteps is a StepLeaseStore that counts each agent's renewals and
// refuses those of agents named lost.
type countingSteps struct {
	mu      sync.Mutex
	renewed map[string]int
	lost    map[string]bool
}

func (s *countingSteps) AcquireStep(context.Context, string, string, LeaseOwner, time.Duration) (RunLease, error) {
	return RunLease{Version: 1}, nil
}

func (s *countingSteps) RenewStep(_ context.Context, _, agent string, _ int64, _ time.Duration) (RunLease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost[agent] {
		return RunLease{}, ErrLeaseLost
	}
	s.renewed[agent]++
	return RunLease{Version: 1}, nil
}

func (s *countingSteps) ReleaseStep(context.Context, string, string, int64) error { return nil }

func (s *countingSteps) ReadSteps(context.Context, string) (map[string]*RunLease, error) {
	return nil, nil
}

// eventually polls ok until it holds or within has passed: a wait for
// progress, bounded generously for a loaded machine, where a fixed sleep
// would count what a scheduler let happen.
func eventually(within time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

func (s *countingSteps) count(agent string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renewed[agent]
}

// TestOneStepsLandingHoldsUpNoOtherStepsHeartbeat: while one claim is held
// by its landing (a database store's, waiting on a busy pool), the service's
// one step heartbeat goes on renewing the others, renews the held one once
// it is free, and closes a lost one's lease as lost, once, renewing it no
// more.
func TestOneStepsLandingHoldsUpNoOtherStepsHeartbeat(t *testing.T) {
	ls := &countingSteps{renewed: map[string]int{}, lost: map[string]bool{"gone": true}}
	lz := &leases{heartbeat: 20 * time.Millisecond, ttl: 40 * time.Millisecond, log: zerolog.Nop()}
	claim := func(agent string) *stepClaim {
		c := &stepClaim{lz: lz, lost: make(chan struct{}), ls: ls, id: "s", agent: agent, version: 1, ttl: lz.ttl}
		lz.steps.hold(lz, c)
		return c
	}
	landing, other, gone := claim("landing"), claim("other"), claim("gone")
	landing.mu.Lock() // its landing is under way, and slow
	// Progress, not a rate: under -race on a loaded machine ten heartbeats
	// of wall time can hold three ticks, so the test waits (bounded) for
	// five renewals of the other lease. A heartbeat that waited on the
	// landing would renew it none.
	if !eventually(10*time.Second, func() bool { return ls.count("other") >= 5 }) {
		t.Errorf("the other step's lease was renewed %d times beside a landing that held its own; want five at least", ls.count("other"))
	}
	if n := ls.count("landing"); n != 0 {
		t.Errorf("the landing's own lease was renewed %d times while the landing held it; want none", n)
	}
	select {
	case <-gone.lost:
	case <-time.After(10 * time.Second):
		t.Error("a lease the store refused as lost was not closed as lost")
	}
	landing.mu.Unlock()
	if !eventually(10*time.Second, func() bool { return ls.count("landing") > 0 }) {
		t.Error("the landing's lease was not renewed once the landing let it go")
	}
	for _, c := range []*stepClaim{landing, other, gone} {
		c.release()
	}
	lz.steps.mu.Lock()
	defer lz.steps.mu.Unlock()
	if len(lz.steps.claims) != 0 || lz.steps.idle != nil {
		t.Errorf("after every release the heartbeat holds %d claims (running: %v); want none, stopped", len(lz.steps.claims), lz.steps.idle != nil)
	}
}
