package coordination

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A store that lives in another process (a database) can be unreachable for
// a while: restarted, failed over, cut off. A run does not end on that: it
// pauses, retries with a bounded backoff, and goes on where it was once the
// store answers — still fenced, since every write it retries checks the
// leases it held (a replica that claimed the run meanwhile makes the retry
// write nothing, ErrLeaseLost). It reports the outage as it happens (a
// warning in the log and a store_outage progress message) and after it (a
// store_outage event in the session's timeline, which team_status shows).

// ErrStoreUnavailable is a store that could not be reached: the operation
// may succeed if tried again later. A store says so by wrapping it, or by
// implementing OutageStore.
var ErrStoreUnavailable = errors.New("the store is unreachable")

// OutageStore is implemented by a store that can tell a lost connection
// from other errors (the PostgreSQL store: refused connections, a server
// shutting down or starting up, a connection cut mid-query).
type OutageStore interface {
	Unavailable(err error) bool
}

// OutageCauser is an OutageStore that can say why it is unavailable, in
// words any client may read (no host, role or database name): a database
// that takes no writes, or is out of disk or connections, is not fixed by
// waiting the way a restart is, and whoever reads the run's progress or a
// refused call's error should know which it is. "" is no cause it can
// tell (a lost connection, a timeout).
type OutageCauser interface {
	OutageCause(err error) string
}

// outageCause is why err, an outage of the store, happened, for any
// client; "" if the store cannot tell.
func (svc *Service) outageCause(err error) string {
	if c, ok := svc.store.(OutageCauser); ok && err != nil {
		return c.OutageCause(err)
	}
	return ""
}

// unavailableFor is "the store is unreachable", or with a cause the store
// tells, "the store is unavailable (<cause>)". was words it in the past.
func (svc *Service) unavailableFor(err error, was bool) string {
	verb := "is"
	if was {
		verb = "was"
	}
	if cause := svc.outageCause(err); cause != "" {
		return "the store " + verb + " unavailable (" + cause + ")"
	}
	return "the store " + verb + " unreachable"
}

// Pinger is a store that can tell whether it is reachable now (a
// database): a server's health check asks it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// ErrServerBehind is a Ping's answer when the store was upgraded past this
// server by another (a rolling upgrade's first new replica migrated the
// database): this server's writes would not follow the new schema's rules,
// so it takes no other server's run over and a load balancer's health
// check takes it out, until it is restarted on the new version.
var ErrServerBehind = errors.New("the store was upgraded past this server")

// StoreReachable is nil when the store answers now (or cannot be asked: a
// store in this process or on its disk), else why it does not.
func (svc *Service) StoreReachable(ctx context.Context) error {
	if p, ok := svc.store.(Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// storeDown tells whether err is the store being unreachable.
func (svc *Service) storeDown(err error) bool { return unreachable(svc.store, err) }

// StoreUnreachable tells whether err, met by a request whose context is
// ctx, is the store being unreachable (a database restarted, failed over
// or cut off): worth trying again later, and nothing of the session is
// lost by it. An error of a request whose own context ended (its deadline,
// its client gone) is not, though a database's driver reports an ended
// context as it reports a lost connection.
func (svc *Service) StoreUnreachable(ctx context.Context, err error) bool {
	return ctx.Err() == nil && svc.storeDown(err)
}

// unreachable tells whether err is st being unreachable. A lost lease never
// is: it is final.
func unreachable(st Store, err error) bool {
	if err == nil || errors.Is(err, ErrLeaseLost) {
		return false
	}
	if errors.Is(err, ErrStoreUnavailable) {
		return true
	}
	o, ok := st.(OutageStore)
	return ok && o.Unavailable(err)
}

// Outage backoff: the first retry after outageFirst, each next one twice as
// late, never more than outageMax apart.
const (
	outageFirst = 200 * time.Millisecond
	outageMax   = 3 * time.Second
)

// outageWait is the pause before retry n (0-based).
func outageWait(n int) time.Duration {
	d := outageFirst
	for range n {
		if d *= 2; d >= outageMax {
			return outageMax
		}
	}
	return d
}

// outage is what a run knows of the store's outage in progress; the zero
// value is no outage. Only the loop's goroutine uses it.
type outage struct {
	since time.Time
	tries int
	last  error
}

// pause records a failed attempt and waits before the next one. It returns
// ctx's cause if ctx ends first (the run cancelled, its lease lost, its
// timeout), nil when it is time to try again.
// what names who waits: "the run", or an agent's step.
func (svc *Service) pause(ctx context.Context, id, what string, o *outage, err error) error {
	if o.since.IsZero() {
		o.since = svc.opts.Now()
	}
	o.last = err
	wait := outageWait(o.tries)
	o.tries++
	svc.counts.storeWaits.Add(1)
	svc.log.Warn().Err(err).Str("session", id).Str("waiting", what).Int("attempt", o.tries).Dur("retry_in", wait).
		Msg("the store is unreachable; waiting and trying again")
	svc.tell(Progress{SessionID: id, Kind: ProgressStoreOutage, Time: svc.now(),
		Message: fmt.Sprintf("%s (for %s, attempt %d): %s waits and tries again in %s",
			svc.unavailableFor(err, false), svc.opts.Now().Sub(o.since).Round(100*time.Millisecond), o.tries, what, wait)})
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// waitOut is the run loop's answer to an error of the store: true when err
// is an outage, the pause ran its course and the run's lease is still its
// claim (runClaim.confirm: the loop reads again); false, with the error to
// stop the run on, for any other error, a pause the run's end cut short, or
// a lease another process claimed while the store was unreachable.
func (svc *Service) waitOut(ctx context.Context, r *Run, s *Session, o *outage, err error) (bool, error) {
	for svc.storeDown(err) {
		if err := svc.pause(ctx, s.ID, "the run", o, err); err != nil {
			return false, err
		}
		if r.claim == nil {
			return true, nil
		}
		if err = r.claim.confirm(ctx); err == nil {
			return true, nil
		}
	}
	return false, err
}

// over ends an outage the store came back from: it says so in the progress
// and the session's timeline (best effort: the store may be gone again).
func (svc *Service) over(ctx context.Context, id, what string, o *outage) {
	svc.overOn(ctx, id, what, o, nil)
}

// overOn is over for an operation tried again after the outage that ended
// in err: nil went on, as over says; any other error the store gave on
// answering again (a refusal, a lease claimed elsewhere meanwhile) ends
// the outage too, worded as the stop it is. An outage still under way, or
// the end of ctx, the context of who waited (a cancel, a timeout during
// the pause), says nothing of the store and records nothing, unless that
// end is a lease found lost, which only the store's answer tells.
func (svc *Service) overOn(ctx context.Context, id, what string, o *outage, err error) {
	if o.since.IsZero() {
		return
	}
	if cause := context.Cause(ctx); ctx.Err() != nil && errors.Is(cause, ErrLeaseLost) {
		err = cause
	} else if err != nil && (svc.storeDown(err) || ctx.Err() != nil && !errors.Is(err, ErrLeaseLost)) {
		return
	}
	msg := svc.outageEnd(o, what, "waited and went on")
	if err != nil {
		msg = svc.outageEnd(o, what, "waited, then stopped: "+svc.stoppedWhy(err))
	}
	svc.log.Info().Str("session", id).AnErr("last", o.last).AnErr("then", err).Msg(msg)
	svc.tell(Progress{SessionID: id, Kind: ProgressStoreOutage, Message: msg, Time: svc.now()})
	svc.event(context.WithoutCancel(ctx), id, Event{Type: "store_outage", Message: msg})
	*o = outage{}
}

// outageEnd is the timeline's line for outage o's end, from its start
// until now: what (who waited) then did as its tail says. The last
// error stays in the log: a database's says which role, database and
// host it could not reach, which is the operator's to know, not every
// client's who reads the timeline.
func (svc *Service) outageEnd(o *outage, what, tail string) string {
	return fmt.Sprintf("%s for %s (%s); %s %s",
		svc.unavailableFor(o.last, true), svc.opts.Now().Sub(o.since).Round(100*time.Millisecond), Count(o.tries, "attempt"), what, tail)
}

// stoppedWhy is why an operation the store answered again stopped, as the
// session's record keeps it (recordedText, Reason): a lost lease in words
// of its own, since its error may name the process that claimed it.
func (svc *Service) stoppedWhy(err error) string {
	if errors.Is(err, ErrLeaseLost) {
		return "another server process took its lease over meanwhile (or it was released), so this one wrote nothing more"
	}
	return Reason(svc.recordedText(err.Error()), ReasonRunes)
}

// throughOutage runs op until it succeeds or fails other than by the store
// being unreachable: an outage is waited out (pause) and reported as the
// run's own is, so that a database blip while a step gets ready, asks or
// lands is never recorded as the agent failing. If ctx ends while it
// waits, it returns op's last error (the outage), for the caller to tell
// by ctx. what names who waits. The outage's end is recorded (overOn)
// whenever the store answered again, op failing then or not, and, when
// ctx ended while it was still unreachable, once it answers (overLater).
func (svc *Service) throughOutage(ctx context.Context, id, what string, op func() error) error {
	var down outage
	for {
		err := op()
		if svc.storeDown(err) && svc.pause(ctx, id, what, &down, err) == nil {
			continue
		}
		svc.overOn(ctx, id, what, &down, err)
		if !down.since.IsZero() && ctx.Err() != nil {
			// Ended while the store had not answered: nothing else may
			// write for who waited (a step-driven session has no run to
			// record its stop), so its end is recorded once it answers.
			go svc.overLater(ctx, id, what, down)
		}
		return err
	}
}
