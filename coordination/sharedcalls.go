package coordination

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// A call can outlive its request: the surface runs its work detached and
// answers "running" (its flights). Behind a load balancer the retry may
// reach another replica, which would do the work again and, for
// generate_eval_criteria, pay a model for it twice. On a store replicas
// share (CallBox: the PostgreSQL store) such work is claimed in the store
// under the call's key: a replica that finds the call claimed waits for it
// and takes the outcome its holder kept, or takes the work over once the
// holder's claim lapses (the holder died). A claim is a lease on a call:
// the service's lease owner holds it, renewed every heartbeat and lapsing
// after the lease TTL (Options.RunHeartbeat, RunLeaseTTL).

// CallBox is implemented by a store that keeps the claims and outcomes of
// calls for every replica sharing it (pgstore). A call is its key (the
// surface's digest of the call); a claim is held by a holder until ttl from
// the store's own clock, then the outcome is kept until keep from it.
type CallBox interface {
	// ClaimCall takes call key for holder, unless another holder's claim
	// is live or its outcome is there uncollected (or collected, when that
	// holder is seen: the one the caller was waiting on). It returns
	// whether the claim is holder's now, whose the call is, and its
	// outcome once the work has ended (nil while it runs).
	ClaimCall(ctx context.Context, key, holder, seen string, ttl time.Duration) (mine bool, by string, outcome []byte, err error)
	// RenewCall extends holder's claim on a running call; false when the
	// claim is no longer holder's.
	RenewCall(ctx context.Context, key, holder string, ttl time.Duration) (bool, error)
	// KeepCall records the outcome of holder's call; an error when the
	// claim lapsed and another holder took the call.
	KeepCall(ctx context.Context, key, holder string, outcome []byte, keep time.Duration) error
	// ReleaseCall lets go of holder's claim on a call with no outcome.
	ReleaseCall(ctx context.Context, key, holder string) error
	// CollectCall marks holder's outcome returned: a new call of the key
	// is new work.
	CollectCall(ctx context.Context, key, holder string) error
}

// DefaultCallLimit bounds a shared call's work (Options.CallLimit).
const DefaultCallLimit = 10 * time.Minute

// callKeep is how long a shared call's outcome is kept for a retry to
// collect, as the surface keeps a detached call's result.
const callKeep = 10 * time.Minute

// ErrCallTooLong ends a shared call's work past its limit: a hung model
// call would otherwise keep its claim renewed, and every replica's retry
// waiting, for ever.
var ErrCallTooLong = errors.New("the work ran past its time limit and was stopped; call again to start it anew")

// SharesCalls tells whether the store keeps calls' claims and outcomes for
// every replica (CallBox).
func (svc *Service) SharesCalls() bool {
	_, ok := svc.store.(CallBox)
	return ok
}

// CallOutcome is what a shared call ended with: the bytes its holder's
// keep made of the work's value or error, whether the store keeps them for
// every replica, and the claim to mark collected.
type CallOutcome struct {
	Kept   []byte
	Stored bool
	box    CallBox
	key    string
	from   string // the holder whose outcome it is
	svc    *Service
}

// Collect marks the outcome returned: a new call of the key, through any
// replica, is new work, while a caller that was waiting for this holder
// still gets it.
func (o CallOutcome) Collect(ctx context.Context) {
	if o.box == nil {
		return
	}
	ctx, cancel := o.svc.callStoreCtx(ctx)
	defer cancel()
	if err := o.box.CollectCall(ctx, o.key, o.from); err != nil {
		o.svc.log.Warn().Err(err).Msg("could not mark a call's outcome collected in the store; a repeat of the call through another replica in the next minutes gets the same outcome")
	}
}

// callHolders numbers this process's claims, each a holder of its own.
var callHolders atomic.Uint64

// ShareCall runs work for call key at most once among the replicas sharing
// the store (SharesCalls must hold), or waits for the replica that runs it.
// work's value is already the bytes to keep; keep makes them of an error
// of work's (ErrCallTooLong included), or says that nothing is to be kept
// (false: the work stopped because its request went away), when the claim
// is let go for a waiting replica to take over and the error is returned.
// A store that cannot be read for a claim's lifetime runs the work here,
// unshared (Stored false).
func (svc *Service) ShareCall(ctx context.Context, key string, work func(context.Context) ([]byte, error), keep func(error) ([]byte, bool)) (CallOutcome, error) {
	box := svc.store.(CallBox)
	holder := svc.leases.owner + "." + strconv.FormatUint(callHolders.Add(1), 36)
	ttl, poll := svc.leases.ttl, min(250*time.Millisecond, svc.leases.ttl/8)
	seen := ""
	var failing time.Time // since when the store has not answered
	for waited := time.Now(); ; {
		cctx, cancel := svc.callStoreCtx(ctx)
		mine, by, kept, err := box.ClaimCall(cctx, key, holder, seen, ttl)
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			// A claim that committed unanswered is let go, so no waiter
			// sits out its lifetime.
			rctx, cancel := svc.callStoreCtx(ctx)
			_ = box.ReleaseCall(rctx, key, holder)
			cancel()
			return CallOutcome{}, context.Cause(ctx)
		case err != nil && failing.IsZero():
			// A blip, or a claim whose answer was lost (it may have
			// committed: the next look finds it this holder's).
			failing = time.Now()
			svc.log.Warn().Err(err).Msg("the store could not say how a call stands; looking again")
		case err != nil && time.Since(failing) > ttl:
			// The store gone for longer than a claim lasts: the work is
			// done here, unshared, rather than not at all.
			svc.log.Warn().Err(err).Msg("the store could not say whether another replica runs a call; running it here")
			out, err := svc.runCall(ctx, work, keep)
			return CallOutcome{Kept: out}, err
		case err != nil:
		case mine || (by == holder && kept == nil):
			return svc.runClaimed(ctx, box, key, holder, work, keep)
		case kept != nil:
			return CallOutcome{Kept: kept, Stored: true, box: box, key: key, from: by, svc: svc}, nil
		}
		if err == nil {
			failing = time.Time{}
		}
		if by != "" && by != seen {
			// A new holder (the last one's claim lapsed): its work has a
			// time limit of its own.
			seen, waited = by, time.Now()
		}
		if time.Since(waited) > svc.callLimit()+ttl+svc.callStoreTimeout()+poll {
			// The holder's work is bounded by the limit and its claim
			// lapses after it (its last renewal may take a statement's
			// time): this is a holder past both.
			return CallOutcome{}, fmt.Errorf("another replica has been doing this call for over %s: %w", svc.callLimit(), ErrCallTooLong)
		}
		select {
		case <-ctx.Done():
			return CallOutcome{}, context.Cause(ctx)
		case <-time.After(poll):
		}
	}
}

// runClaimed does the work of a call claimed in the store, renewing the
// claim every heartbeat, and keeps its outcome for the replica a retry
// reaches. Past the limit the work is stopped, and, if deaf to its
// context, left behind: neither this call nor one waiting on it waits for
// ever, and the claim is no longer renewed.
func (svc *Service) runClaimed(ctx context.Context, box CallBox, key, holder string, work func(context.Context) ([]byte, error), keep func(error) ([]byte, bool)) (CallOutcome, error) {
	wctx, cancelWork := context.WithTimeoutCause(ctx, svc.callLimit(), ErrCallTooLong)
	defer cancelWork()
	renewing, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(renewing)
		tick := time.NewTicker(svc.leases.heartbeat)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-wctx.Done():
				return
			case <-tick.C:
				if wctx.Err() != nil { // both ready: the deadline wins
					return
				}
				rctx, cancel := svc.callStoreCtx(ctx)
				ok, err := box.RenewCall(rctx, key, holder, svc.leases.ttl)
				cancel()
				if err != nil || !ok {
					svc.log.Warn().Err(err).Bool("lapsed", !ok).Msg("could not renew this replica's claim on a call in the store; another replica may do it again")
				}
			}
		}
	}()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := work(wctx)
		done <- result{out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-wctx.Done():
		select {
		case r = <-done: // it heard its context after all
		case <-time.After(svc.callStoreTimeout()):
			r.err = context.Cause(wctx)
		}
	}
	close(stop)
	<-renewing
	if r.err != nil && errors.Is(context.Cause(wctx), ErrCallTooLong) && ctx.Err() == nil {
		r.err = fmt.Errorf("%w (%s)", ErrCallTooLong, svc.callLimit())
	}
	bg, cancel := svc.callStoreCtx(ctx)
	defer cancel()
	if r.err != nil {
		var ok bool
		if r.out, ok = keep(r.err); !ok {
			if err := box.ReleaseCall(bg, key, holder); err != nil {
				svc.log.Warn().Err(err).Msg("could not let go of a call's claim in the store; another replica takes it once the claim lapses")
			}
			return CallOutcome{}, r.err
		}
	}
	out := CallOutcome{Kept: r.out, box: box, key: key, from: holder, svc: svc}
	if err := box.KeepCall(bg, key, holder, r.out, callKeep); err != nil {
		svc.log.Warn().Err(err).Msg("could not keep a call's outcome in the store; a retry through another replica does the work again")
		return out, nil
	}
	out.Stored = true
	return out, nil
}

// runCall does the work unshared: its bytes, or keep's of its error.
func (svc *Service) runCall(ctx context.Context, work func(context.Context) ([]byte, error), keep func(error) ([]byte, bool)) ([]byte, error) {
	out, err := work(ctx)
	if err == nil {
		return out, nil
	}
	if out, ok := keep(err); ok {
		return out, nil
	}
	return nil, err
}

// callLimit is Options.CallLimit or DefaultCallLimit.
func (svc *Service) callLimit() time.Duration {
	return cmp.Or(svc.opts.CallLimit, DefaultCallLimit)
}

// callStoreTimeout bounds each store statement of a shared call, so a hung
// one neither stops the renewals nor holds the outcome back.
func (svc *Service) callStoreTimeout() time.Duration { return svc.leases.ttl / 3 }

// callStoreCtx is ctx without its cancel, bounded by callStoreTimeout: a
// statement about work whose request ended must still be made.
func (svc *Service) callStoreCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), svc.callStoreTimeout())
}
