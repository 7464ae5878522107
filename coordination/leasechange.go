package coordination

import (
	"context"
	"time"
)

// LeaseChange is a store's one atomic read-modify-write of a lease: the
// session's run lease when agent is "", else that agent's step lease. A
// store supplies it; Claim, Renew and Release apply the rules through it,
// so every store's AcquireRun, AcquireStep and the rest are one call each
// and the stores cannot disagree on a rule or a clock.
type LeaseChange func(ctx context.Context, id, agent string, rule func(cur *RunLease) (RunLease, error)) (RunLease, error)

// Claim applies ClaimLease (ClaimStepLease for an agent's step).
func (c LeaseChange) Claim(ctx context.Context, id, agent string, owner LeaseOwner, ttl time.Duration) (RunLease, error) {
	return c(ctx, id, agent, func(cur *RunLease) (RunLease, error) {
		if agent == "" {
			return ClaimLease(id, cur, owner, time.Now(), ttl)
		}
		return ClaimStepLease(id, agent, cur, owner, time.Now(), ttl)
	})
}

// Renew applies RenewLease (RenewStepLease for an agent's step).
func (c LeaseChange) Renew(ctx context.Context, id, agent string, version int64, ttl time.Duration) (RunLease, error) {
	return c(ctx, id, agent, func(cur *RunLease) (RunLease, error) {
		if agent == "" {
			return RenewLease(id, cur, version, time.Now(), ttl)
		}
		return RenewStepLease(id, agent, cur, version, time.Now(), ttl)
	})
}

// Release applies ReleaseLease (ReleaseStepLease for an agent's step).
func (c LeaseChange) Release(ctx context.Context, id, agent string, version int64) error {
	_, err := c(ctx, id, agent, func(cur *RunLease) (RunLease, error) {
		if agent == "" {
			return ReleaseLease(id, cur, version, time.Now())
		}
		return ReleaseStepLease(id, agent, cur, version, time.Now())
	})
	return err
}
