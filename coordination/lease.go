package coordination

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// StatusInterrupted is the status of a session whose run died without
// ending it: its run lease was abandoned (the holder neither released it nor
// is alive). It is never written to the ledger; readers derive it from the
// lease (Service.Status, Inspect, ListSessions), and a claim clears it.
const StatusInterrupted = "interrupted"

// ErrLeaseLost is what a holder's renew, release or fenced write gets once
// its claim (of a run, or of a step) is no longer current: another process
// claimed it after the lease expired, or it was released. The holder must
// stop without writing (it was fenced).
var ErrLeaseLost = errors.New("the lease is no longer this claim's: another process claimed it, or it was released")

// Lease defaults: the holder renews every DefaultHeartbeat and a lease not
// renewed for DefaultLeaseTTL has expired. A reader on another host allows
// MaxClockSkew on top, its clock and the holder's being different clocks.
const (
	DefaultHeartbeat = 2 * time.Second
	DefaultLeaseTTL  = 10 * time.Second
	MaxClockSkew     = time.Second
)

// LeaseOwner says who holds a lease and where it runs, for the rules (a
// holder on this host whose process is gone is dead at once) and for people
// (status shows who last ran a session).
type LeaseOwner struct {
	ID   string `json:"owner"` // unique to the holding service
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// ProcStart is the holder's process start time as the kernel counts it
	// (clock ticks since boot, /proc/<pid>/stat), so a pid reused by another
	// process is not taken for the holder. 0 where unknown.
	ProcStart uint64 `json:"proc_start,omitempty"`
}

// RunLease is a session's run lease as a store holds it. A store keeps the
// record after it is released, so that Version only ever grows.
type RunLease struct {
	LeaseOwner
	// Version is the fencing token: one more on every claim. A renew or a
	// release names it, and fails with ErrLeaseLost once another claim
	// replaced it.
	Version  int64     `json:"version"`
	Claimed  time.Time `json:"claimed_at"`
	Renewed  time.Time `json:"renewed_at"` // the last heartbeat: when the holder was last known alive
	Expires  time.Time `json:"expires_at"`
	Released bool      `json:"released"`
	// RanBefore is how long the session's earlier runs (or the agent's
	// earlier tries of its step) ran before this claim took over from
	// them, each from its claim to its last heartbeat: a claim of an
	// unreleased lease (a run or step whose process died, or a run handed
	// over) carries the time its holder had plus that holder's own; a
	// claim after a released one (the run ended, a resume is a new
	// decision; the step landed or was given up) starts again from 0. A
	// run's timeout counts it (Rules.TimeoutSeconds binds across the
	// replicas that run it), and a step's (StepTimeoutSeconds binds
	// across the replicas that try it). Milliseconds, as a database keeps
	// it.
	RanBefore time.Duration `json:"ran_before,omitempty"`
	// CarriedFrom is, on a claim that carries RanBefore, when the lease it
	// took over was claimed: a step's claimant tells by it whether that
	// try's step landed after all (an entry of the agent's since), its
	// release lost, and the time is not this step's. Never stored.
	CarriedFrom time.Time `json:"-"`
	// ChainFrom is the version of the first claim of the run of claims
	// this one belongs to: its own on a claim after a release (or the
	// first), the lease's it took over otherwise (an unreleased lease:
	// a try whose process died, a try given up in an outage, a run
	// handed over). A step's tool calls are recorded under their claim's
	// version (permissions.Record.Lease), so a step taken over counts
	// those of its run of claims, and none of a run of the same step
	// number released before it (a cancelled call: callsbefore.go).
	// 0 on a lease stored before it was kept.
	ChainFrom int64 `json:"chain_from,omitempty"`
	// Gone says the store knows the holder is dead before its expiry (the
	// file store: a holder on this host whose process is gone and whose run
	// lock the kernel dropped; PostgreSQL, to a command's read: a replica
	// whose liveness lock the database dropped and which beats no more).
	// Never stored.
	Gone bool `json:"-"`
	// Alive says the store knows the holder is alive whatever the expiry
	// says (the file store: a holder on this host whose process runs and
	// holds the run lock, its heartbeat only late; there only a reader is
	// told so, and a claim goes by the expiry), or must be taken to be
	// (PostgreSQL: a lease an outage excuses, ExcusedByOutage, which a
	// claim by another process is refused over too). Never stored.
	Alive bool `json:"-"`
}

// Held tells whether the lease belongs to a live holder at now: claimed,
// not released, not known gone and not expired. A lease written on another
// host is given MaxClockSkew more, its expiry being that host's clock.
func (l *RunLease) Held(now time.Time) bool {
	if l == nil || l.Released || l.Gone {
		return false
	}
	if l.Alive {
		return true
	}
	exp := l.Expires
	if l.Host != ThisHost() {
		exp = exp.Add(MaxClockSkew)
	}
	return now.Before(exp)
}

// ExcusedByOutage tells whether l, unreleased and not known gone, may be a
// live holder's lease that ran out only because its holder could not reach
// the store either: the store last lost its database at lost and heard it
// again at back (back before lost: not yet), as this process saw it, and l
// was still current within one of its TTLs (Expires less Renewed) before
// the loss was seen. Such a holder is given a whole TTL of the store
// answering, from back, to renew: until then the lease reads held (Alive)
// and no claim takes it. Without this, every replica read a run interrupted
// the moment a database came back from an outage longer than a TTL, and one
// took it over from its live holder, whose steps in flight were wasted.
func ExcusedByOutage(l *RunLease, lost, back, now time.Time) bool {
	if l == nil || l.Released || l.Gone {
		return false
	}
	since, ok := OutageExcuses(max(0, l.Expires.Sub(l.Renewed)), lost, back, now)
	return ok && l.Expires.After(since)
}

// OutageExcuses tells whether an outage lost at lost and over at back
// (back before lost: not yet) excuses, at now, leases of ttl that ran out
// after since: it does while it goes on and for a TTL (and the clock
// allowance) after back, and since is a TTL (and the allowance) before
// lost, for a lease that ran out earlier was late already before the
// outage, its holder dead before it. ExcusedByOutage applies it to a run
// or step lease; a store whose lock rows are taken over in a statement
// (PostgreSQL) takes over only rows that ran out before since.
func OutageExcuses(ttl time.Duration, lost, back, now time.Time) (since time.Time, ok bool) {
	if lost.IsZero() || !(back.Before(lost) || now.Before(back.Add(ttl+MaxClockSkew))) {
		return time.Time{}, false
	}
	return lost.Add(-ttl - MaxClockSkew), true
}

// HandedOver tells whether the lease's holder stopped and left it to the
// others at once (runClaim.handOver: a last renewal of no time, a server
// stopping under --resume-interrupted) rather than dying: its expiry is
// its last renewal, to the store's precision.
func (l *RunLease) HandedOver() bool {
	return l != nil && !l.Released && l.Expires.Sub(l.Renewed) < time.Millisecond
}

// Abandoned tells whether the run that held the lease died without ending:
// neither released nor held. Its session is interrupted.
func (l *RunLease) Abandoned(now time.Time) bool {
	return l != nil && !l.Released && !l.Held(now)
}

// LeaseStore keeps each session's run lease: the process running a
// session's loop holds it, renews it by a heartbeat and releases it when the
// loop ends. Every store implements it with the same rules (storetest's
// LeaseCases): the memory store in memory, the file store in a lease file
// beside the session, a database in a row (expiry and version, claimed with
// FOR UPDATE SKIP LOCKED).
type LeaseStore interface {
	// AcquireRun claims the run lease for owner until now+ttl, unless a live
	// holder has it (ErrSessionRunning). The claim's Version is one more than
	// any before it.
	AcquireRun(ctx context.Context, id string, owner LeaseOwner, ttl time.Duration) (RunLease, error)
	// RenewRun extends the claim named by version to now+ttl; ErrLeaseLost
	// if it is released or another claim replaced it. An expired claim that
	// nobody replaced is renewed: its holder was only late.
	RenewRun(ctx context.Context, id string, version int64, ttl time.Duration) (RunLease, error)
	// ReleaseRun ends the claim named by version, keeping the record;
	// ErrLeaseLost as for RenewRun.
	ReleaseRun(ctx context.Context, id string, version int64) error
	// ReadRun reads the lease without taking it: nil if the session's run was
	// never claimed.
	ReadRun(ctx context.Context, id string) (*RunLease, error)
}

var (
	thisHost     string
	thisHostOnce sync.Once
)

// ThisHost is this machine's host name as leases record it.
func ThisHost() string {
	thisHostOnce.Do(func() {
		thisHost, _ = os.Hostname()
	})
	return thisHost
}

// thisStart is this process's start time once it has been read: it cannot
// change while the process lives, and reading /proc on every claim was a
// quarter of the CPU of a step in the 1,000-session benchmark. A failed
// read is not kept, so the next claim tries again as it always did.
var thisStart atomic.Pointer[uint64]

// ThisProcess is the lease owner for this process, with the given id.
func ThisProcess(id string) LeaseOwner {
	pid := os.Getpid()
	var start uint64
	if p := thisStart.Load(); p != nil {
		start = *p
	} else if s, ok := ProcessStart(pid); ok {
		thisStart.Store(&s)
		start = s
	}
	return LeaseOwner{ID: id, Host: ThisHost(), PID: pid, ProcStart: start}
}

// The lease rules every store applies to its stored record (cur, nil when
// there is none) inside one atomic read-modify-write: a store only keeps the
// record and makes the change atomic, so the stores cannot disagree. A run
// lease and a step lease follow the same rules; only the words differ.

// ClaimLease is AcquireRun's rule: a new claim by owner, one version on, or
// ErrSessionRunning while cur is held.
func ClaimLease(id string, cur *RunLease, owner LeaseOwner, now time.Time, ttl time.Duration) (RunLease, error) {
	if cur.Held(now) {
		return RunLease{}, &RunningError{Session: id, By: holder(cur)}
	}
	return claimNext(cur, owner, now, ttl), nil
}

// RenewLease is RenewRun's rule.
func RenewLease(id string, cur *RunLease, version int64, now time.Time, ttl time.Duration) (RunLease, error) {
	return renew(runWhat(id), cur, version, now, ttl)
}

// ReleaseLease is ReleaseRun's rule: the record stays, released and expired.
func ReleaseLease(id string, cur *RunLease, version int64, now time.Time) (RunLease, error) {
	return release(runWhat(id), cur, version, now)
}

// leaseWhat names a lease in the errors of its rules: a session's run
// lease, or an agent's step lease. It is formatted only when an error
// says it: every step renews and releases its lease, and formatting the
// name up front was an allocation of every one.
type leaseWhat struct{ id, agent string }

func (w leaseWhat) String() string {
	if w.agent == "" {
		return fmt.Sprintf("session %q: its run", w.id)
	}
	return fmt.Sprintf("session %q: the step of agent %q", w.id, w.agent)
}

func runWhat(id string) leaseWhat { return leaseWhat{id: id} }

// claimNext is the claim after cur. A claim of an unreleased lease (its
// holder died, or was handed over from) carries the time cur's holder had
// and the time it carried (RanBefore), when cur was claimed
// (CarriedFrom), and where cur's run of claims began (ChainFrom); a claim
// after a release starts from nothing, a run of claims of its own.
func claimNext(cur *RunLease, owner LeaseOwner, now time.Time, ttl time.Duration) RunLease {
	next := RunLease{LeaseOwner: owner, Version: 1, Claimed: now, Renewed: now, Expires: now.Add(ttl)}
	if cur != nil {
		next.Version = cur.Version + 1
	}
	next.ChainFrom = next.Version
	if cur != nil && !cur.Released {
		next.RanBefore = (cur.RanBefore + max(0, cur.Renewed.Sub(cur.Claimed))).Truncate(time.Millisecond)
		next.CarriedFrom = cur.Claimed
		next.ChainFrom = cur.ChainFrom
		if next.ChainFrom == 0 || next.ChainFrom > cur.Version { // stored before it was kept
			next.ChainFrom = cur.Version
		}
	}
	return next
}

func renew(what leaseWhat, cur *RunLease, version int64, now time.Time, ttl time.Duration) (RunLease, error) {
	if err := holds(what, cur, version); err != nil {
		return RunLease{}, err
	}
	l := *cur
	l.Renewed, l.Expires, l.Gone = now, now.Add(ttl), false
	return l, nil
}

func release(what leaseWhat, cur *RunLease, version int64, now time.Time) (RunLease, error) {
	if err := holds(what, cur, version); err != nil {
		return RunLease{}, err
	}
	l := *cur
	l.Released, l.Renewed, l.Expires, l.Gone = true, now, now, false
	return l, nil
}

// holds says whether version is cur's unreleased claim of what.
func holds(what leaseWhat, cur *RunLease, version int64) error {
	switch {
	case cur == nil || cur.Version != version:
		return fmt.Errorf("%s: claim %d is no longer current: %w", what, version, ErrLeaseLost)
	case cur.Released:
		return fmt.Errorf("%s: claim %d was released: %w", what, version, ErrLeaseLost)
	}
	return nil
}

// LastAliveAt says when an interrupted run was last alive, in layout and
// location loc, or "an unknown time" when no heartbeat was recorded.
func LastAliveAt(t *time.Time, layout string, loc *time.Location) string {
	if t == nil {
		return "an unknown time"
	}
	return t.In(loc).Format(layout)
}
