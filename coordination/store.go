package coordination

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// Store persists sessions. The file store (MassGen's step-mode layout) and the
// memory store implement it and pass one shared test suite (storetest), and
// one shared benchmark measures them (storebench).
//
// It is small interfaces, as hashicorp/raft splits its LogStore and
// StableStore, so a database store implements, tests and measures one part
// at a time: the sessions' setups, the ledger, the locks and the timeline.
// Each has its storetest cases (storetest.SessionCases, LedgerCases,
// LockCases, EventCases). What the file store also keeps for readers outside
// the process is the optional ProjectionStore.
type Store interface {
	SessionStore
	LedgerStore
	LockStore
	EventStore
}

// SessionStore keeps each session's setup and the views issued to its host
// agents.
type SessionStore interface {
	// Create writes a new session; ErrSessionExists if the id is taken.
	Create(ctx context.Context, s *Session) error
	// Session loads a session's setup; ErrSessionNotFound if there is none.
	// The session returned is the caller's own: a fresh copy each call,
	// which the service may keep and annotate (its prompt cache).
	Session(ctx context.Context, id string) (*Session, error)
	// Sessions lists the ids of every stored session, oldest first.
	Sessions(ctx context.Context) ([]string, error)
	// SetCriteria replaces a session's evaluation criteria, the one part of
	// its setup that may change, and only before its first step; the caller
	// holds the session lock and has checked that.
	SetCriteria(ctx context.Context, id string, items []criteria.Item) error
	// SetReady records at as the session's ReadyAt: Create has stored all
	// of it. by, if not nil, becomes its Creator: the process that ended
	// the creation, asked again for the same team once the one that began
	// it was gone (nil keeps the creator stored). The caller holds the
	// session lock; ErrSessionNotFound if there is no such session.
	SetReady(ctx context.Context, id string, at time.Time, by *Creator) error
	// SaveView records the view last issued to a host agent; View reads it
	// (nil if none was issued).
	SaveView(ctx context.Context, id, agent string, v IssuedView) error
	View(ctx context.Context, id, agent string) (*IssuedView, error)
}

// LedgerStore keeps the ledger: every agent's entries (appended through a
// held StepLock, LockStore.LockStep) and the session entries.
type LedgerStore interface {
	// Ledger reads every entry of a session.
	Ledger(ctx context.Context, id string) (*Ledger, error)
	// AppendSession records a session entry; the caller holds the session
	// lock. The store assigns Seq.
	AppendSession(ctx context.Context, id string, e SessionEntry) (SessionEntry, error)
}

// LockStore holds the locks: a per-agent step lock held for a whole step (a
// second one is refused with ErrAgentBusy; the step number is allocated
// under it), a session lock for session-level writes and every decision,
// and a run lock held by a running loop. In-flight steps are visible without
// taking any lock.
type LockStore interface {
	// InFlight tells which agents hold their step lock right now, without
	// taking any lock (so a check never makes a starting step busy).
	InFlight(ctx context.Context, id string) (map[string]bool, error)
	// LockStep takes an agent's step lock, or fails at once with ErrAgentBusy.
	// The caller has checked that agent is in the session's team (the
	// Service does, where it takes every step lock): a store checks the
	// id's form, not the setup.
	LockStep(ctx context.Context, id, agent string) (StepLock, error)
	// LockSession blocks until it holds the session lock (or ctx ends).
	LockSession(ctx context.Context, id string) (unlock func(), err error)
	// LockRun takes the session's run lock, or fails at once with
	// ErrSessionRunning.
	LockRun(ctx context.Context, id string) (unlock func(), err error)
}

// EventStore keeps the timeline and tells watchers of every change.
type EventStore interface {
	// AppendEvent adds one line to the timeline.
	AppendEvent(ctx context.Context, id string, ev Event) error
	// Watch reports every change to the session's record — a step or a
	// session entry landing, the timeline growing — made through this store
	// or, for a store shared between processes, by any of them, until ctx
	// ends (the channel is then closed). It fails with ErrSessionNotFound
	// for a session that does not exist. Changes coalesce (see Change); a
	// change seen by the store reaches the watcher within a second.
	Watch(ctx context.Context, id string) (<-chan Change, error)
}

// LocalStore is implemented by a store no other process reaches (the
// memory store): a run loop over it does not watch its session for a cancel
// from elsewhere, since Cancel in this process stops the run directly. A
// run over any other store — files, a database other replicas share —
// watches (run.go).
type LocalStore interface {
	ProcessLocal() bool
}

// processLocal tells whether only this process reaches the store.
func processLocal(st Store) bool {
	l, ok := st.(LocalStore)
	return ok && l.ProcessLocal()
}

// ProjectionStore is implemented by a store that keeps, beside the ledger,
// what readers outside this process read: the file store keeps MassGen's
// status.json, the final files and the session's directory (workspaces,
// snapshots). The store renders and writes them itself; the service only
// tells it the state it derived. The final files are the store's own
// business entirely: it writes them as a finished entry is appended
// (AppendSession) and rebuilds them when Tidy finds them missing or damaged.
//
// The memory store keeps none worth reading, so the service skips deriving
// a projection on every step (a fifth of a step's CPU) and the store skips
// the final files when a session ends (an indented encoding of the whole
// result, as sessions end together with others' steps landing). A store
// without it keeps no workspaces either. Its storetest cases are
// ProjectionCases.
type ProjectionStore interface {
	// Project renders the store's projection of a session's state as the
	// service derived it under the session lock, and returns the write,
	// which the service runs at once or, for a running session, in the
	// background: one write at a time, the latest last. Rendering happens
	// in the call because the state is the service's and a later
	// derivation may reuse it; the write may run after the lock is let go.
	Project(p Projection) (write func(ctx context.Context) error, err error)
	// Dir is the session's directory, or "" for a store without one.
	Dir(id string) string
}

// WorkspaceStore is implemented by a store shared by replicas that keeps
// the workspaces' snapshots itself (the PostgreSQL store): each replica
// works in a directory of its own, and a snapshot it lacks is materialised
// from the store as it is read (workspace.Remote). An answer's snapshot,
// staged in that directory (Entry.Stage), is recorded by StepLock.Append
// in the same transaction as the answer.
type WorkspaceStore interface {
	// WorkDir is this replica's directory for the session's workspaces,
	// or "" when it keeps none.
	WorkDir(id string) string
	// Snapshots is the session's snapshots as every replica reads them.
	Snapshots(id string) workspace.Remote
}

// Projection is a session's state as the service derived it, for the
// store's projections; nothing in it may be kept past Project.
type Projection struct {
	Session *Session
	State   *State
	Result  *TeamResult // the result as it stands
	At      time.Time   // when it was derived
}

// StepLock is a held per-agent step lock.
type StepLock interface {
	// Step is the number the agent's next entry takes (allocated under the
	// lock: one more than its latest).
	Step() int
	// Append writes the agent's entry for this step (Step is set from the
	// lock) together with its last_action record. Once per lock.
	Append(ctx context.Context, e Entry) (Entry, error)
	// Release lets the lock go. Safe to call more than once.
	Release()
}

// ReleasingStepLock is a StepLock that can let itself go in the write that
// lands its step (the PostgreSQL store: the lock row's delete goes with the
// entry, a round trip fewer a step). Only a landing after which nothing more
// is done under the lock may use it.
type ReleasingStepLock interface {
	StepLock
	// AppendAndRelease is Append then Release, in one write. An append
	// that fails leaves the lock held, as Append's does.
	AppendAndRelease(ctx context.Context, e Entry) (Entry, error)
}

// SpendSharingStepLock is a StepLock of a store that replicas step through
// together (the PostgreSQL store), or that outlives the process stepping
// it (the file store: a spend file beside the lock). A step in flight
// keeps its spend so far on its lock, where every replica's budget check
// reads it: two replicas each running a CLI agent's step of one
// step-driven session then stop both at the session's budget, where each
// counting only its own steps would let each spend up to it; and a holder
// that dies mid-step leaves what its turns cost for the agent's next step,
// a run's start or the session's end to record (DeadSpendStore).
type SpendSharingStepLock interface {
	StepLock
	// ShareSpend records the step's spend so far (cost, unknown counted as
	// zero, and tokens) on the lock and returns the session's: its ledger's
	// spend plus every step in flight, on any replica, this one included.
	ShareSpend(ctx context.Context, cost float64, tokens int64) (sessionCost float64, sessionTokens int64, err error)
	// SpendKey is the key the step's spend is shared under, unique to this
	// take of the lock: a usage entry recording that spend names it
	// (SessionEntry.Spender), so that it is counted once however many
	// record it.
	SpendKey() string
	// TakenOverSpend is what the lock's row carried when this take found
	// it expired: the spend a holder that stopped answering mid-step had
	// shared on it, and what that holder's own take had inherited and not
	// yet seen recorded, each under the key it was shared under; none
	// when the lock was free. Nobody else will record it. The row goes on
	// counting each until a usage entry under its key is recorded
	// (SessionEntry.Spender), which takes it off the row in the same write.
	TakenOverSpend() []InheritedSpend
}

// SpendHoldStore is a store whose replicas share what the calls made on a
// session's behalf outside its steps (a criteria call) hold of its
// budgets: before each attempt such a call reserves its worst case, and a
// call or a step on any replica must count it. The PostgreSQL store is
// one; a store whose sessions one process alone runs needs none (the
// process's own holds, spendhold.go, are all there are).
type SpendHoldStore interface {
	// HoldSpend keeps, under key, cost and tokens held for the session
	// until ttl from now, replacing what key held before, and commits it;
	// then it reads the session's spend on every replica: what its
	// ledger and every step in flight spent (as ShareSpend counts it),
	// and apart what the other keys' holds that have not expired hold.
	// Written before it reads, of two holds made at once at least one
	// sees the other.
	HoldSpend(ctx context.Context, id, key string, cost float64, tokens int64, ttl time.Duration) (HeldSpend, error)
	// LetGoSpend deletes key's hold: the call's spend is recorded, or it
	// ended without spending.
	LetGoSpend(ctx context.Context, id, key string) error
}

// HeldSpend is a session's spend as HoldSpend reads it: spent by its
// ledger and its steps in flight on every replica, and held by the other
// calls' holds. Tokens are input plus output; an unknown cost is zero.
type HeldSpend struct {
	SpentCost   float64
	SpentTokens int64
	HeldCost    float64
	HeldTokens  int64
}

// SpendHold is one call's hold on a session's budget as a store that
// shares holds keeps it (SpendHoldStore.HoldSpend): its key, and what it
// holds in dollars and in tokens (input plus output).
type SpendHold struct {
	Key    string
	Cost   float64
	Tokens int64
}

// SpendRecordedStore is a store whose step locks share spend
// (SpendSharingStepLock). A usage entry under a spend key takes the key's
// spend off the lock rows in its own write; a record that finds the key's
// spend in the ledger already writes no entry, so it calls SpendRecorded
// instead, under the session lock: else a row that came to count the key
// after its first record (a late share, a take inheriting it) would count
// it beside the ledger for good.
type SpendRecordedStore interface {
	SpendRecorded(ctx context.Context, id, key string) error
}

// InheritedSpend is a spend a step lock's take found on the lock, shared
// there under Key by a holder that stopped answering (SpendSharingStepLock).
type InheritedSpend struct {
	Key     string
	CostUSD float64
	Tokens  int64 // input plus output, the split unknown
}

// DeadSpendStore is a store whose step locks share spend
// (SpendSharingStepLock) that can also give up, without a step of the
// agent, what its lock rows carry for holders that stopped answering: a
// take (LockStep) finds only its own agent's, and an agent that never
// steps again would leave its dead holder's spend on the row for good,
// counted by the shares but never in the ledger (the session's result,
// overLimit and a run's launch check read the ledger). The service records
// each spend returned under its key (SessionEntry.Spender), which takes it
// off the rows as a take's record does: as a run starts (taken over, or
// resumed), and as the session ends (decided, finished, cancelled).
type DeadSpendStore interface {
	// TakeDeadSpend fences every step lock of the session whose holder
	// stopped renewing it (expired, as a take would find it) and left
	// spend shared on it: as a take would, it moves that spend into what
	// the row inherited, under the holder's key, and leaves the row
	// holderless, so the holder's late landing is refused (ErrLeaseLost)
	// and its own record of its call counts only the rest. It returns what
	// every step lock row of the session has inherited and not yet seen
	// recorded, each under its key, with the agent whose lock it is; a
	// live holder's own spend is neither moved nor returned. A store whose
	// lock rows a crash can lose (the PostgreSQL store's are unlogged)
	// keeps each holder's shared spend durably too, and gives up the spend
	// of a holder whose row the crash took and that did not put it back
	// in time, fenced the same way. None for a session with no such rows,
	// or none at all. With an error it may return what it did take (the
	// file store: every agent but those whose lock it could not read).
	TakeDeadSpend(ctx context.Context, id string) ([]DeadSpend, error)
}

// HeldSpendStore is a DeadSpendStore that tells how long the spend shared
// on step locks still held stays out of TakeDeadSpend's reach. A replica
// that died mid-step leaves its run lease and its step locks, renewed on
// beats of their own, to run out up to a beat apart: a run taking over
// the session as the run lease runs out finds the steps' spend not yet the
// dead holder's to take.
type HeldSpendStore interface {
	// HeldSpendRunsOut is how long until every step lock of the session
	// that carries shared spend and is not yet past its expiry is, if its
	// holder renews it no more; 0 when there is none.
	HeldSpendRunsOut(ctx context.Context, id string) (time.Duration, error)
}

// DeadSpend is a spend a lock row of the agent's carries for a holder that
// stopped answering (DeadSpendStore).
type DeadSpend struct {
	Agent string
	InheritedSpend
}

// LeasedLanding is a ReleasingStepLock whose store also keeps the step
// leases (StepLeaseStore) and can fence a landing by the agent's step lease
// and release it in the write that lands the step (the PostgreSQL store: the
// lease row held and changed in the landing's transaction, two round trips
// fewer a server step). Only a landing after which nothing more is done
// under the lock or the lease may use it.
type LeasedLanding interface {
	ReleasingStepLock
	// LandLeased is AppendAndRelease, landing only while the agent's step
	// lease is still claim version and unreleased: otherwise it writes
	// nothing and fails with ErrLeaseLost (StepLeaseLost's words). released
	// says the same write released the lease (or that there is none left
	// for the caller to release); when false, the lease is still held and
	// the caller releases it with ReleaseStep, as before. It lands only
	// while the session log holds no more cancelled entries than cancels
	// (the count when the step began) too: otherwise it writes nothing,
	// releases nothing and fails with CancelledMidStep. The caller holds
	// the session lock, under which cancels are recorded.
	LandLeased(ctx context.Context, e Entry, version int64, cancels int) (entry Entry, released bool, err error)
}

// UncancelledLanding is a StepLock that can also fence a landing by the
// session's cancels in the write that lands it (the PostgreSQL store): it
// lands only while the session log holds no more cancelled entries than
// cancels (the count when the step began); otherwise it writes nothing and
// fails with CancelledMidStep. The service counts them under the session
// lock too (lockLanding); a store whose session lock can pass to a second
// holder (a database's unlogged row, handed on by a crash or a missed
// expiry) keeps the cancel fence in its own write as well. A landing that
// found the store unreachable and is tried again lands if its entry is
// already stored, as lockLanding lets it.
type UncancelledLanding interface {
	StepLock
	AppendUncancelled(ctx context.Context, e Entry, cancels int) (Entry, error)
}

// SessionDeleter is implemented by a store that can delete a session whole
// (Service.Prune): its setup, ledger, timeline, leases, locks, snapshots,
// permissions and every other record kept under its id, and nothing of any
// other session or tenant. The caller holds the session's run and session
// locks and has checked that it ended; a store removes it so that a crash
// midway never leaves a session half there for a reader to trip on.
// ErrSessionNotFound if there is no such session.
type SessionDeleter interface {
	DeleteSession(ctx context.Context, id string) error
}

// SessionSizer is implemented by a store that can tell how much space
// deleting a session frees (the file store: its directory's disk usage;
// PostgreSQL: its rows' stored size).
type SessionSizer interface {
	SessionBytes(ctx context.Context, id string) (int64, error)
}

// SizingDeleter is a SessionDeleter that measures what it deletes as it
// deletes it (PostgreSQL: the stored size of the rows, in the deleting
// transaction), so a prune reports exactly what went. Prune prefers it to
// a SessionSizer's measure taken before the delete.
type SizingDeleter interface {
	DeleteSessionSized(ctx context.Context, id string) (int64, error)
}

// GarbageCollector is implemented by a store that keeps, beside its
// sessions, what deleting them leaves unreferenced: the PostgreSQL store's
// blobs (shared by the sessions of a tenant, so only unreferenced once no
// snapshot or image names them), the file store's session directories a
// crash left in its trash. Prune calls it once after its deletions.
// Nothing used within grace is collected: a snapshot being taken now may
// reuse a blob before its manifest lands.
type GarbageCollector interface {
	CollectGarbage(ctx context.Context, grace time.Duration) (Collected, error)
}

// Collected is what a GarbageCollector removed.
type Collected struct {
	Blobs     int   // blobs (and their chunks) deleted
	Leftovers int   // sessions a crashed delete left in the trash, removed now
	Bytes     int64 // the space they held
}

// DirOf is the session's directory in st, or "" for a store without
// directories (no ProjectionStore).
func DirOf(st Store, id string) string {
	if p, ok := st.(ProjectionStore); ok {
		return p.Dir(id)
	}
	return ""
}

// LedgerLender is implemented by a store that can lend its ledger instead of
// copying it (the memory store: a deep copy of every entry was a tenth of a
// step's CPU). The lent ledger shares its entries with the store and with
// every other borrower, so the service only reads it; Store.Ledger stays the
// way to get a ledger one may change.
type LedgerLender interface {
	LendLedger(ctx context.Context, id string) (*Ledger, error)
}

// StateLender is implemented by a LedgerLender that can tell who is in
// flight (LockStore.InFlight) with the loan, at the cost of one read (the
// PostgreSQL store: one round trip, where the two were two, and every
// derivation needs both). The in-flight map is the caller's. A store that
// shares holds (SpendHoldStore) gives, in the same read, every hold on the
// session's budget that has not expired, its own process's too (nil when
// there are none): a run's launch counts the others' beside the ledger it
// launches from, so the read that shows them costs it nothing more.
type StateLender interface {
	LedgerLender
	LendState(ctx context.Context, id string) (*Ledger, map[string]bool, []SpendHold, error)
}

// Births is implemented by a store other processes share (the PostgreSQL
// store's replicas), where a session may be deleted and made again under
// its id behind this process's back: Born is when the session now stored
// under id was created (ErrNotFound when there is none), one small read,
// so a kept setup is checked before it is served (sessions.get).
type Births interface {
	Born(ctx context.Context, id string) (time.Time, error)
}

// DatedSession is a session id with its creation time, as a store lists it.
type DatedSession struct {
	ID        string
	CreatedAt time.Time
}

// OldestFirst orders sessions the way Store.Sessions lists them: by creation
// time, ties by id, so every store lists the same sessions alike.
func OldestFirst(ds []DatedSession) []string {
	slices.SortFunc(ds, func(a, b DatedSession) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}
