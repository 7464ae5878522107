package coordination

import (
	"context"
	"errors"
)

// A run's own session entries — the revotes, the decision and the end it
// writes, the cancel or error that stopped it, the resume that lifted a
// cancel — are what another replica's run of the same session would be
// stopped or ended by. A run that lost its lease (its connection stalled
// past the expiry, the session claimed elsewhere meanwhile) must not write
// them: whileDown bounds when a write begins, but only the store can refuse
// one that lands late. A store with run leases does, in the write itself
// (LeasedSessionStore), as a step's landing is fenced by its step lease.
//
// Usage entries are not fenced: a call's spend is the user's money, paid
// whoever holds the run now, and it stops and ends nothing.

// LeasedSessionStore is implemented by a store with run leases
// (LeaseStore): AppendSessionLeased is AppendSession made only while the
// session's run lease is the claim named by version, unreleased (expired
// but not claimed again counts, as RenewRun renews it), checked atomically
// with the write, so no claim lands between them; ErrLeaseLost otherwise,
// with nothing written. storetest's LeaseCases hold every store with run
// leases to it.
type LeasedSessionStore interface {
	AppendSessionLeased(ctx context.Context, id string, version int64, e SessionEntry) (SessionEntry, error)
}

// HoldsRunLease is AppendSessionLeased's rule: nil while version is cur's
// unreleased claim of session id's run.
func HoldsRunLease(id string, cur *RunLease, version int64) error {
	return holds(runWhat(id), cur, version)
}

// runLeaseKey carries a run's claim in the run's context: every write of
// the run's loop, its settles and its stop's records, is made under it, and
// threading the version through each would tie the protocol's functions to
// a lease they do not otherwise use. It names its session, so a write the
// run makes for another session is not fenced by this one's lease.
type runLeaseKey struct{}

type runLease struct {
	id      string
	version int64
	claim   *runClaim // told when the store refuses a write by its fence
}

// withRunLease is the run's context for a claim; a claim without a lease
// store (none to fence by) leaves it as it is.
func withRunLease(ctx context.Context, c *runClaim) context.Context {
	if c == nil || c.ls == nil {
		return ctx
	}
	return context.WithValue(ctx, runLeaseKey{}, runLease{id: c.id, version: c.version, claim: c})
}

// withoutRunLease is ctx with no run's claim: for work that outlives the
// run it was begun by (a spend recorded once an outage ends), whose
// follow-up writes are made for the session, not by a run that has ended
// and let its lease go.
func withoutRunLease(ctx context.Context) context.Context {
	if _, ok := ctx.Value(runLeaseKey{}).(runLease); !ok {
		return ctx
	}
	return context.WithValue(ctx, runLeaseKey{}, runLease{})
}

// appendSession records a session entry, fenced by the run's lease when
// ctx is a run's of this session and the store can fence it, and by the
// log its decision read when ctx carries it (withLogRead) and the store's
// session lock cannot be trusted to (ReadFencedSessionStore).
func (svc *Service) appendSession(ctx context.Context, id string, e SessionEntry) (SessionEntry, error) {
	var lease runLease
	ls, leased := svc.store.(LeasedSessionStore)
	if l, ok := ctx.Value(runLeaseKey{}).(runLease); ok && l.id == id && leased {
		lease = l
	}
	rs, fenced := svc.store.(ReadFencedSessionStore)
	read, readNow := readFence(ctx, id, e)
	var out SessionEntry
	var err error
	switch {
	case fenced && readNow:
		out, err = rs.AppendSessionSinceRead(ctx, id, lease.version, read, e)
	case lease.version != 0:
		out, err = ls.AppendSessionLeased(ctx, id, lease.version, e)
	default:
		return svc.store.AppendSession(ctx, id, e)
	}
	if errors.Is(err, ErrLeaseLost) && lease.claim != nil {
		// The store says so: the claim is lost, as a heartbeat would find
		// it (the run stops; counts.go counts it).
		lease.claim.markLost()
	}
	return out, err
}
