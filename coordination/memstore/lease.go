package memstore

import (
	"context"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The run lease lives in the session's record, under its mutex; the rules
// are coordination's (ClaimLease, RenewLease, ReleaseLease), as in every
// store.

var (
	_ coordination.LeaseStore         = (*Store)(nil)
	_ coordination.LeasedSessionStore = (*Store)(nil)
)

// AcquireRun claims the session's run lease (coordination.LeaseStore).
func (s *Store) AcquireRun(ctx context.Context, id string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	return s.leases().Claim(ctx, id, "", owner, ttl)
}

// RenewRun extends a claim (coordination.LeaseStore).
func (s *Store) RenewRun(ctx context.Context, id string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	return s.leases().Renew(ctx, id, "", version, ttl)
}

// ReleaseRun ends a claim (coordination.LeaseStore).
func (s *Store) ReleaseRun(ctx context.Context, id string, version int64) error {
	return s.leases().Release(ctx, id, "", version)
}

// leases is the store's lease change for coordination's rules: the run
// lease, or an agent's step lease.
func (s *Store) leases() coordination.LeaseChange {
	return func(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
		if agent == "" {
			return s.changeLease(ctx, id, rule)
		}
		return s.changeStep(ctx, id, agent, rule)
	}
}

// ReadRun reads the lease (coordination.LeaseStore).
func (s *Store) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.lease == nil {
		return nil, nil
	}
	l := *ss.lease
	return &l, nil
}

func (s *Store) changeLease(ctx context.Context, id string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return coordination.RunLease{}, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	l, err := rule(ss.lease)
	if err != nil {
		return coordination.RunLease{}, err
	}
	ss.lease = &l
	return l, nil
}

var _ coordination.StepLeaseStore = (*Store)(nil)

// AcquireStep claims an agent's step lease (coordination.StepLeaseStore).
func (s *Store) AcquireStep(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	return s.leases().Claim(ctx, id, agent, owner, ttl)
}

// RenewStep extends a step's claim (coordination.StepLeaseStore).
func (s *Store) RenewStep(ctx context.Context, id, agent string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	return s.leases().Renew(ctx, id, agent, version, ttl)
}

// ReleaseStep ends a step's claim (coordination.StepLeaseStore).
func (s *Store) ReleaseStep(ctx context.Context, id, agent string, version int64) error {
	return s.leases().Release(ctx, id, agent, version)
}

// ReadSteps reads every agent's step lease (coordination.StepLeaseStore).
func (s *Store) ReadSteps(ctx context.Context, id string) (map[string]*coordination.RunLease, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make(map[string]*coordination.RunLease, len(ss.steps))
	for a, l := range ss.steps {
		c := *l
		// Whoever holds the agent's step lock lives in this process: a late
		// heartbeat (a loaded machine) is not a dead step, as on disk.
		if al := ss.agents[a]; al != nil && al.busy && !c.Released {
			c.Alive = true
		}
		out[a] = &c
	}
	return out, nil
}

func (s *Store) changeStep(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return coordination.RunLease{}, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	l, err := rule(ss.steps[agent])
	if err != nil {
		return coordination.RunLease{}, err
	}
	if ss.steps == nil {
		ss.steps = make(map[string]*coordination.RunLease)
	}
	ss.steps[agent] = &l
	return l, nil
}
