package coordination

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// A run holds its session's run lease (lease.go) from its start to its end:
// the run lock keeps two runs on this host apart, the lease keeps them apart
// across hosts, and tells readers the run is alive. The heartbeat renews it
// every Options.RunHeartbeat; a lease lost to another claim stops the run
// without writing (ErrLeaseLost: it was fenced).

// runClaim is a held run lock and run lease with its heartbeat.
type runClaim struct {
	beat
	lz      *leases // whose undos take back a release that failed
	unlock  func()
	ls      LeaseStore // nil for a store without leases
	id      string
	version int64
	ttl     time.Duration
	once    sync.Once
	// interrupted: the lease this claim replaced was unreleased (a dead
	// run's, or this service's own left to expire), or there was none in a
	// session created for a run by another start than this claim's
	// (tookUpUnclaimed), so the session read interrupted before, or would
	// have past NeverStartedGrace; a start that fails leaves the claim to
	// expire for it to read so again.
	interrupted bool
	// first: the store had no run lease for the session: no run had ever
	// claimed it.
	first bool
	// ranBefore is how long the session's earlier runs ran before this
	// claim took over from them (RunLease.RanBefore): the run's timeout
	// counts it.
	ranBefore time.Duration
}

// beat is a lease's heartbeat, a run's or a step's.
type beat struct {
	stop chan struct{}
	done chan struct{}
	lost chan struct{} // closed when the lease was lost to another claim (markLost)
	// loseOnce closes lost once: the heartbeat finds a claim lost, or a
	// write the store refused by the claim's fence does (leasedentries.go).
	loseOnce sync.Once
	// renewed is when the last claim or renewal the store took was sent
	// (unix nanoseconds, this host's clock): the lease lasts a TTL from
	// then at least, as its writer's clock counts.
	renewed atomic.Int64
}

func newBeat() beat {
	return beat{stop: make(chan struct{}), done: make(chan struct{}), lost: make(chan struct{})}
}

// markLost says the claim is lost, once.
func (b *beat) markLost() { b.loseOnce.Do(func() { close(b.lost) }) }

// isLost tells whether the claim was found lost.
func (b *beat) isLost() bool {
	select {
	case <-b.lost:
		return true
	default:
		return false
	}
}

// newOwnerID is a service's lease owner id: random, so two services in one
// process (tenants) or a restarted process never share one.
func newOwnerID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// leases takes this service's run and step leases and beats their hearts:
// the store's leases, held under the service's owner id.
type leases struct {
	store          Store
	owner          string // the id this service's leases carry
	heartbeat, ttl time.Duration
	log            zerolog.Logger
	steps          stepBeats // the step leases held, one heartbeat for all
	undos          runUndos  // failed run claims being taken back (claimundo.go)
}

// newLeases applies the defaults to the options' lease times.
func newLeases(store Store, opts Options) *leases {
	heartbeat, ttl := opts.RunHeartbeat, opts.RunLeaseTTL
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	return &leases{store: store, owner: newOwnerID(), heartbeat: heartbeat, ttl: max(ttl, 2*heartbeat), log: opts.Logger}
}

// claimRun takes the session's run lock and run lease, and starts the
// heartbeat. A live holder elsewhere refuses it with ErrSessionRunning; an
// interrupted session's dead holder does not: dead is the lease of the run
// this claim took over from (nil when it took over from none), which the
// caller records.
func (lz *leases) claimRun(ctx context.Context, id string) (c *runClaim, dead *RunLease, err error) {
	unlock, err := lz.store.LockRun(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ls, ok := lz.store.(LeaseStore)
	if !ok {
		return lockOnly(id, unlock), nil, nil
	}
	c = &runClaim{beat: newBeat(), lz: lz, unlock: unlock, id: id}
	lz.undos.end(id)
	prev, prevErr := ls.ReadRun(ctx, id)
	c.interrupted = prevErr == nil && prev != nil && !prev.Released
	c.first = prevErr == nil && prev == nil
	if c.interrupted && prev.ID == lz.owner {
		// This service's own lease, unreleased, while it holds the run
		// lock, so no run of its own holds the session: a run that could
		// not record why it stopped left it to expire (Run.leaveLease),
		// or a failed claim the store wrote after all (claimundo.go).
		// Taken back rather than waited out, and no run died.
		if err := ls.ReleaseRun(ctx, id, prev.Version); err == nil {
			prev.Released = true
			// Its run's time still counts for the run this claim starts
			// (the claim after a release carries none).
			c.ranBefore = prev.RanBefore + max(0, prev.Renewed.Sub(prev.Claimed))
		}
	}
	sent := time.Now()
	l, err := ls.AcquireRun(ctx, id, ThisProcess(lz.owner), lz.ttl)
	if err != nil {
		// The undo is registered before the run lock goes: the next claim
		// (under the lock) stops it first (undos.end), so it never
		// releases that claim's lease of the same version.
		if !refusedClaim(err) {
			if v, ok := undoableRunClaim(prev, prevErr); ok {
				lz.undos.start(lz, ls, id, v) // claimundo.go
			}
		}
		unlock()
		return nil, nil, err
	}
	c.ls, c.version, c.ttl = ls, l.Version, lz.ttl
	c.ranBefore = max(c.ranBefore, l.RanBefore)
	c.renewed.Store(sent.UnixNano())
	go lz.beat(&c.beat, id, "run", func(ctx context.Context) error {
		_, err := ls.RenewRun(ctx, id, c.version, lz.ttl)
		return err
	})
	// A claim that replaced an unreleased one took over from a dead run.
	if prev != nil && !prev.Released && prev.Version == l.Version-1 {
		dead = prev
	}
	return c, dead, nil
}

// lockOnly is a claim of a session's run lock alone (unlock), with no lease
// and no heartbeat: a store without leases, or a step-driven session's
// Finalize.
func lockOnly(id string, unlock func()) *runClaim {
	c := &runClaim{beat: newBeat(), unlock: unlock, id: id}
	close(c.done)
	return c
}

// resumedFrom records that a claim took over from a dead run (claimRun):
// how says what took it up ("resumed" for a run). The timeline names the
// dead run by its lease's id; its process and host, which are the
// server's own, go to the operator's log (resumedLog), since anyone who
// may read the session reads its timeline.
func resumedFrom(dead *RunLease, how string) Event {
	ended, when := endedHow(dead)
	return Event{Type: "resumed", Message: fmt.Sprintf("session %s: the run that held it (%s) %s, %s %s",
		how, dead.ID, ended, when, dead.Renewed.UTC().Format(time.RFC3339))}
}

// endedHow says how a run whose lease a claim took over ended, and what
// its lease's last renewal was: handed over by its server as it stopped
// (at that time), or died (last alive then: its lease ran out).
func endedHow(dead *RunLease) (ended, when string) {
	if dead.HandedOver() {
		return "was handed over as its server stopped", "at"
	}
	return "died", "last alive"
}

// resumedLog logs a takeover with the process and host of the run taken
// over: a warning when that run died, which the operator wants to hear of
// at the default level (a replica gone), and information when its server
// handed it over as it stopped.
func (svc *Service) resumedLog(id string, dead *RunLease, how string) {
	ev := svc.log.Warn()
	if dead.HandedOver() {
		ev = svc.log.Info()
	}
	ended, _ := endedHow(dead)
	ev.Str("session", id).Str("previous_run", dead.ID).Int("pid", dead.PID).Str("host", dead.Host).
		Time("last_alive", dead.Renewed).Msg("session " + how + ": the run that held it " + ended)
}

// beat renews a lease (what: "run", or the step of an agent) every
// heartbeat until its claim is released or lost. A renew that fails for
// another reason (a full disk) is tried again at the next beat; the lease
// expires if none succeeds in time.
func (lz *leases) beat(b *beat, id, what string, renew func(context.Context) error) {
	every := lz.heartbeat
	defer close(b.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		sent := time.Now()
		err := renew(ctx)
		cancel()
		if err == nil {
			b.renewed.Store(sent.UnixNano())
		}
		switch {
		case errors.Is(err, ErrLeaseLost):
			lz.log.Warn().Err(err).Str("session", id).Str("lease", what).Msg("this lease was claimed by another process; stopping without writing")
			b.markLost()
			return
		case err != nil:
			lz.log.Warn().Err(err).Str("session", id).Str("lease", what).Msg("could not renew the lease; trying again at the next heartbeat")
		}
	}
}

// holds tells until when this claim's lease surely holds, and whether it is
// lost already (its heartbeat was told of another claim). A store without
// leases: for ever, from the caller's view (no other process can claim).
// The lease lasts a TTL from its last renewal's sending by its writer's
// clock (the database's, for a shared store); another process may claim
// it then, so a margin is kept for the two clocks' difference.
func (c *runClaim) holds() (until time.Time, lost bool) {
	select {
	case <-c.lost:
		return time.Time{}, true
	default:
	}
	if c.ls == nil {
		return time.Now().Add(time.Hour), false
	}
	margin := min(MaxClockSkew, c.ttl/4)
	return time.Unix(0, c.renewed.Load()).Add(c.ttl - margin), false
}

// confirm tells whether the claim still holds before a run goes on after a
// pause: nil while its lease surely lasts; past that (the store was
// unreachable longer than the lease, so the heartbeat could not renew it)
// it renews the lease now, which another process's claim meanwhile refuses
// (ErrLeaseLost, and the claim is marked lost). Without this the run would
// start steps in a session another replica had taken over: each fenced by
// its own step lease, not the run's, so they would land and be paid for.
func (c *runClaim) confirm(ctx context.Context) error {
	until, lost := c.holds()
	if lost {
		return ErrLeaseLost
	}
	if c.ls == nil || time.Now().Before(until) {
		return nil
	}
	sent := time.Now()
	if _, err := c.ls.RenewRun(ctx, c.id, c.version, c.ttl); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			c.markLost()
		}
		return err
	}
	for { // the heartbeat may have stored a later renewal meanwhile
		old := c.renewed.Load()
		if old >= sent.UnixNano() || c.renewed.CompareAndSwap(old, sent.UnixNano()) {
			return nil
		}
	}
}

// fence cancels the run when its lease is lost, until the run ends.
func (c *runClaim) fence(r *Run) {
	select {
	case <-c.lost:
		r.cancel(ErrLeaseLost)
	case <-r.done:
	}
}

// release stops the heartbeat, releases the lease and lets the run lock go.
// Safe to call more than once, and after leave.
func (c *runClaim) release() { c.end(endRelease) }

// leave is release without releasing the lease: it expires a TTL after
// its last renewal, and the session then reads interrupted (a run that
// could not record why it stopped).
func (c *runClaim) leave() { c.end(endLeave) }

// handOver is leave with the lease made to expire now, by a last renewal
// of no time: the session reads interrupted at once, and a server resuming
// those claims it within its next look (another host's a MaxClockSkew
// later) instead of a TTL later. The run has stopped writing by then.
// One that fails leaves the lease to expire in its time.
func (c *runClaim) handOver() { c.end(endHandOver) }

// How a claim ends its lease.
const (
	endRelease = iota
	endLeave
	endHandOver
)

func (c *runClaim) end(how int) {
	c.once.Do(func() {
		if c.ls != nil {
			close(c.stop)
			<-c.done
			select {
			case <-c.lost:
			default:
				// Without the caller's context: a cancelled run still
				// releases its lease. A release that fails is tried again
				// in the background, registered before the run lock goes
				// (claimundo.go): a start that failed leaves a session
				// that reads running, and its lease, expired, would read
				// interrupted, for a replica to run what nobody asked for.
				switch how {
				case endRelease:
					if err := c.ls.ReleaseRun(context.Background(), c.id, c.version); err != nil && !errors.Is(err, ErrLeaseLost) && c.lz != nil {
						c.lz.log.Warn().Err(err).Str("session", c.id).Msg("could not release the run's lease; trying again")
						c.lz.undos.start(c.lz, c.ls, c.id, c.version)
					}
				case endHandOver:
					_, _ = c.ls.RenewRun(context.Background(), c.id, c.version, time.Nanosecond)
				}
			}
		}
		c.unlock()
	})
}

// interrupted returns res marked interrupted when the session's run died
// without ending it (its lease abandoned), or its creator did before any
// run claimed it (neverStarted), with when it was last alive and its
// duration up to then; otherwise res itself. Only a running or decided
// session can be interrupted, and never one that runs here.
func (svc *Service) interrupted(ctx context.Context, s *Session, res *TeamResult) *TeamResult {
	if res == nil || (res.Status != StatusRunning && res.Status != StatusDecided) {
		return res
	}
	ls, ok := svc.store.(LeaseStore)
	if !ok {
		return res
	}
	if _, here := svc.Running(s.ID); here {
		return res
	}
	l, err := ls.ReadRun(ctx, s.ID)
	if err != nil {
		return res
	}
	var alive time.Time
	switch {
	case l.Abandoned(svc.now()):
		alive = l.Renewed
	case svc.neverStarted(ctx, s, l):
		// Its creator was last known alive as it finished creating it,
		// and nothing has run since (neverstarted.go).
		alive, _ = createdBy(s)
	default:
		return res
	}
	out := res.Clone()
	out.Status, out.LastAlive = StatusInterrupted, &alive
	out.Duration = max(0, alive.Sub(s.CreatedAt).Seconds())
	return out
}

// ResumeInterrupted claims and continues every interrupted session of the
// store (serve --resume-interrupted): each is started as run_team would,
// and belongs to this service from then on. A session another process
// claims first is left to it. It returns the ids it resumed; a server the
// store was upgraded past (ErrServerBehind) resumes none.
//
// Each run resumed takes a slot from slot (nil: no cap), as a client's run
// would, and keeps it until it ends: a server at its limit of running
// teams leaves the rest for another replica, or for its own next look, and
// says so (ErrAtRunLimit, with the ids it did resume). One slot is taken
// before the sessions are listed, so a server already at its limit lists
// nothing (an interrupted finalize waits for its next look too); once
// listed, an interrupted finalize needs no slot of its own.
func (svc *Service) ResumeInterrupted(ctx context.Context, slot RunSlot) ([]string, error) {
	if err := svc.StoreReachable(ctx); errors.Is(err, ErrServerBehind) {
		return nil, err
	}
	slots := &resumeSlots{take: slot}
	if err := slots.reserve(ctx); err != nil {
		return nil, err
	}
	defer slots.giveBack()
	page, err := svc.ListSessions(ctx, SessionQuery{Status: StatusInterrupted})
	if err != nil {
		return nil, err
	}
	var resumed []string
	for _, sum := range page.Sessions {
		// The listing read the session before now: a cancel that landed
		// since is kept. One already here skips the session; one that
		// lands from here on is not among the cancels the run may lift.
		l, _, err := svc.sessions.lend(ctx, sum.SessionID)
		if err != nil {
			svc.log.Warn().Err(err).Str("session", sum.SessionID).Msg("could not read an interrupted session to resume it")
			continue
		}
		life := lifecycle(l.Session)
		if life.Status == StatusCancelled || svc.creationMayGoOn(ctx, sum.SessionID) {
			continue
		}
		if interruptedFinalize(l) {
			// Its user cancelled it and then asked for it to end: that
			// finalize is finished here, not the team run on.
			if _, err := svc.Finalize(ctx, sum.SessionID, ""); err != nil && !errors.Is(err, ErrSessionRunning) {
				svc.log.Warn().Err(err).Str("session", sum.SessionID).Msg("could not finish an interrupted finalize")
			} else if err == nil {
				resumed = append(resumed, sum.SessionID)
			}
			continue
		}
		steps := sync.OnceValues(func() (int, bool) { return svc.runSteps(ctx, sum.SessionID, l) })
		if !svc.resumeDue(sum.SessionID, steps) {
			continue
		}
		release, ok := slots.next(ctx)
		if !ok {
			continue
		}
		var r *Run
		var started bool
		r, started, err = svc.start(ctx, sum.SessionID, life.Cancels)
		if err != nil {
			release()
		} else {
			r.HoldUntilDone(started, release)
		}
		switch {
		case err == nil:
			if life.Status != StatusDecided {
				// A decided session's resume is only its finish, which
				// fails after the start (finishRefused): its failures
				// count on until it finishes.
				svc.resumeWaits.Delete(sum.SessionID)
			}
			resumed = append(resumed, sum.SessionID)
		case errors.Is(err, ErrSessionRunning):
			// Another replica's try, which may fail as this one's did:
			// the wait stands (a success elsewhere leaves nothing to do).
		case svc.storeDown(err): // tried again at the next look
			svc.log.Warn().Err(err).Str("session", sum.SessionID).Msg("could not resume an interrupted session: the store is unreachable")
		default:
			next := svc.resumeFailed(sum.SessionID, steps)
			svc.log.Warn().Err(err).Str("session", sum.SessionID).Time("next_try", next).Msg("could not resume an interrupted session; trying it again later")
		}
	}
	return resumed, slots.full
}

// ErrAtRunLimit is ResumeInterrupted leaving interrupted sessions for
// later: the server is at its limit of running teams.
var ErrAtRunLimit = errors.New("this server is at its limit of running teams: the interrupted sessions it did not resume are left for another server, or its next look")

// resumeSlots hands ResumeInterrupted's starts their run slots: one taken
// ahead (reserve), then one each, until the first refusal (full).
type resumeSlots struct {
	take  RunSlot // nil: no cap
	spare func()
	full  error
}

// reserve takes the slot the first start will use, refusing a look at a
// server already at its limit.
func (rs *resumeSlots) reserve(ctx context.Context) error {
	if rs.take == nil {
		return nil
	}
	release, err := rs.take(ctx)
	if err != nil {
		return fmt.Errorf("%w (%w)", ErrAtRunLimit, err)
	}
	rs.spare = release
	return nil
}

// next is a start's slot; false once the server is at its limit.
func (rs *resumeSlots) next(ctx context.Context) (release func(), ok bool) {
	switch {
	case rs.take == nil:
		return func() {}, true
	case rs.full != nil:
		return nil, false
	case rs.spare != nil:
		release, rs.spare = rs.spare, nil
		return release, true
	}
	release, err := rs.take(ctx)
	if err != nil {
		rs.full = fmt.Errorf("%w (%w)", ErrAtRunLimit, err)
		return nil, false
	}
	return release, true
}

// giveBack returns the reserved slot if no start used it.
func (rs *resumeSlots) giveBack() {
	if rs.spare != nil {
		rs.spare()
		rs.spare = nil
	}
}

// interruptedFinalize tells whether the last thing that happened to a
// session's life was a Finalize resuming it from a cancel to decide it
// (resumedToFinalize): that Finalize failed before it could, and the session,
// left interrupted, is to be finalized, not run.
func interruptedFinalize(l *Ledger) bool {
	for i := len(l.Session) - 1; i >= 0; i-- {
		switch e := l.Session[i]; e.Kind {
		case SessionUsage, SessionApplied:
			continue
		case SessionResumed:
			return e.Reason == resumedToFinalize
		default:
			return false
		}
	}
	return false
}
