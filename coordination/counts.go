package coordination

import (
	"sync/atomic"
	"time"
)

// Counts are what an operator of replicas sharing a store watches a service
// by, since it started (serve's /metrics): runs taken over from a holder
// that died, runs that stopped because another process claimed their lease
// or it was released under them, and the waits on an unreachable store.
// Rates of them are the alerts: failovers, split leases, outages.
type Counts struct {
	// RunsTakenOver counts the runs this service claimed from a dead
	// holder's lease (another replica's, or a crashed run's).
	RunsTakenOver int64
	// RunsLostLease counts the runs that ended with their lease lost:
	// another process claimed the session (or the claim was released
	// under the run), and the run stopped writing.
	RunsLostLease int64
	// StoreWaits counts the waits a run or a step made for an unreachable
	// store before trying again (Service.pause), every attempt: one
	// outage is several.
	StoreWaits int64
}

// counts are a service's Counts as they grow.
type counts struct {
	takenOver, lostLease, storeWaits atomic.Int64
}

// Counts reads the service's counts.
func (svc *Service) Counts() Counts {
	return Counts{
		RunsTakenOver: svc.counts.takenOver.Load(),
		RunsLostLease: svc.counts.lostLease.Load(),
		StoreWaits:    svc.counts.storeWaits.Load(),
	}
}

// runEnded counts a run that ended with its claim lost: its heartbeat or
// a fenced write found another claim, or the claim released, in the
// store. Not a run that only could not tell, its record given up in an
// outage that may have outlasted the lease (whileDown).
func (c *counts) runEnded(claim *runClaim) {
	if claim != nil && claim.isLost() {
		c.lostLease.Add(1)
	}
}

// PoolStats is one connection pool of a store shared by replicas, as an
// operator's metrics read it.
type PoolStats struct {
	Name                 string // which of the store's pools
	Max, Total, Acquired int32  // connections: the cap, open, in use
	Idle                 int32
	WaitedAcquires       int64         // acquires that found none free and waited
	AcquireWait          time.Duration // their waits, in all
}

// PoolReporter is implemented by a store with connection pools (the
// PostgreSQL store): the tenants' stores share them, so any one reports
// them all.
type PoolReporter interface {
	Pools() []PoolStats
}
