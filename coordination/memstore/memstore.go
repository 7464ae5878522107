package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Store keeps sessions in memory. It is safe for concurrent use. A session
// costs a few small maps plus its entries.
type Store struct {
	mu       sync.RWMutex
	sessions map[string]*session
}

var _ coordination.Store = (*Store)(nil)

// ProcessLocal says no other process reaches the store: a run over it is
// cancelled directly, not through a watch (coordination.LocalStore).
func (s *Store) ProcessLocal() bool { return true }

// New returns an empty store.
func New() *Store { return &Store{sessions: make(map[string]*session)} }

type session struct {
	// setup is replaced whole, never changed in place: only SetCriteria
	// and SetReady replace it, before the session's first step.
	setup atomic.Pointer[coordination.Session]

	mu      sync.Mutex
	agents  map[string]*agentLog
	log     []coordination.SessionEntry
	events  []coordination.Event
	views   map[string]coordination.IssuedView
	images  map[string][]byte                  // by SHA-256, images.go
	tools   map[toolKey][]providers.ToolRecord // toollog.go
	perms   []permissions.Record               // permissions.go
	running bool
	lease   *coordination.RunLease            // lease.go
	steps   map[string]*coordination.RunLease // step leases by agent, lease.go
	// lent is the ledger LendLedger last handed out, until anything is
	// appended (nil: build a new one).
	lent *coordination.Ledger

	gate chan struct{} // the session lock: full while held

	feed coordination.Feed // Watch's watchers
}

type agentLog struct {
	entries []coordination.Entry
	busy    bool // step lock held
}

// live is get for a caller whose context must still be live.
func (s *Store) live(ctx context.Context, id string) (*session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.get(id)
}

// liveAgent is live for one agent of the session, whose id it checks.
func (s *Store) liveAgent(ctx context.Context, id, agent string) (*session, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := coordination.CheckAgentID(agent); err != nil {
		return nil, err
	}
	return ss, nil
}

func (s *Store) get(id string) (*session, error) {
	if err := coordination.CheckSessionID(id); err != nil {
		return nil, err
	}
	s.mu.RLock()
	ss := s.sessions[id]
	s.mu.RUnlock()
	if ss == nil {
		return nil, fmt.Errorf("session %q not found in this server's memory (it keeps no sessions across restarts): %w", id, coordination.ErrSessionNotFound)
	}
	return ss, nil
}

// Create stores a copy of the session.
func (s *Store) Create(ctx context.Context, sess *coordination.Session) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if sess == nil {
		return fmt.Errorf("there is no session to create: %w", coordination.ErrBadInput)
	}
	if err := coordination.CheckSessionID(sess.ID); err != nil {
		return err
	}
	agents := make(map[string]*agentLog, len(sess.Agents))
	for _, a := range sess.Agents {
		if err := coordination.CheckAgentID(a.ID); err != nil {
			return err
		}
		if agents[a.ID] != nil {
			return fmt.Errorf("agent id %q appears twice in the team; give every agent its own id: %w", a.ID, coordination.ErrBadInput)
		}
		agents[a.ID] = &agentLog{}
	}
	setup := copySession(sess)
	// Foreign describes a session MassGen wrote on disk; the file store cannot
	// keep the flag either.
	setup.Foreign = false
	ss := &session{agents: agents, gate: make(chan struct{}, 1)}
	ss.setup.Store(setup)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sess.ID] != nil {
		return fmt.Errorf("session %q already exists; choose another id, or leave it out for a generated one: %w", sess.ID, coordination.ErrSessionExists)
	}
	s.sessions[sess.ID] = ss
	return nil
}

// Session returns a copy of the session's setup.
func (s *Store) Session(ctx context.Context, id string) (*coordination.Session, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	return copySession(ss.setup.Load()), nil
}

// Sessions lists the ids, oldest first by CreatedAt (ties by id).
func (s *Store) Sessions(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	all := make([]coordination.DatedSession, 0, len(s.sessions))
	for id, ss := range s.sessions {
		all = append(all, coordination.DatedSession{ID: id, CreatedAt: ss.setup.Load().CreatedAt})
	}
	s.mu.RUnlock()
	return coordination.OldestFirst(all), nil
}

// Ledger returns a copy of every entry.
func (s *Store) Ledger(ctx context.Context, id string) (*coordination.Ledger, error) {
	loan, err := s.LendLedger(ctx, id)
	if err != nil {
		return nil, err
	}
	l := &coordination.Ledger{Agents: make(map[string][]coordination.Entry, len(loan.Agents))}
	for a, entries := range loan.Agents {
		cp := make([]coordination.Entry, len(entries))
		for i, e := range entries {
			cp[i] = e.Clone()
		}
		l.Agents[a] = cp
	}
	if len(loan.Session) > 0 {
		l.Session = make([]coordination.SessionEntry, len(loan.Session))
		for i, e := range loan.Session {
			l.Session[i] = copySessionEntry(e)
		}
	}
	return l, nil
}

// LendLedger returns the session's ledger without copying its entries
// (coordination.LedgerLender). Stored entries are never changed after they
// are appended, and appends only ever write past the lent length, so a
// borrower that only reads needs no lock. Borrowers share one loan until the
// ledger grows.
func (s *Store) LendLedger(ctx context.Context, id string) (*coordination.Ledger, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.lent != nil {
		return ss.lent, nil
	}
	l := &coordination.Ledger{Agents: make(map[string][]coordination.Entry, len(ss.agents))}
	for a, al := range ss.agents {
		n := len(al.entries)
		l.Agents[a] = al.entries[:n:n]
	}
	if n := len(ss.log); n > 0 {
		l.Session = ss.log[:n:n]
	}
	ss.lent = l
	return l, nil
}

// InFlight lists the agents whose step lock is held.
func (s *Store) InFlight(ctx context.Context, id string) (map[string]bool, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	held := make(map[string]bool)
	for a, al := range ss.agents {
		if al.busy {
			held[a] = true
		}
	}
	return held, nil
}

// LockStep takes an agent's step lock or fails at once with ErrAgentBusy.
func (s *Store) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	ss, err := s.liveAgent(ctx, id, agent)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	al := ss.agents[agent]
	if al == nil {
		// As on disk, an agent's record starts with its first lock.
		al = &agentLog{}
		ss.agents[agent] = al
		ss.lent = nil
	}
	if al.busy {
		return nil, &coordination.BusyError{Session: id, Agent: agent}
	}
	al.busy = true
	next := 1
	if n := len(al.entries); n > 0 {
		next = al.entries[n-1].Step + 1
	}
	return &stepLock{s: ss, id: id, agent: agent, step: next}, nil
}

type stepLock struct {
	s         *session
	id, agent string
	step      int
	released  bool // guarded by s.mu
	appended  bool // guarded by s.mu
}

func (l *stepLock) Step() int { return l.step }

func (l *stepLock) Release() {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if !l.released {
		l.released = true
		l.s.agents[l.agent].busy = false
	}
}

// Append records the entry; ctx is not consulted, as in the file store (the
// entry of a cancelled step is written after its context ended).
func (l *stepLock) Append(_ context.Context, e coordination.Entry) (coordination.Entry, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if err := coordination.CheckStepAppend(l.id, l.agent, l.step, l.released, l.appended, e); err != nil {
		return coordination.Entry{}, err
	}
	al := l.s.agents[l.agent]
	e = e.Kept().Clone() // as the file store keeps it, and not shared with the caller
	e.Agent, e.Step = l.agent, l.step
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC().Truncate(time.Millisecond)
	if e.Kind == coordination.KindAnswer && e.AnswerNum == 0 {
		n := 1
		for _, old := range al.entries {
			if old.Kind == coordination.KindAnswer {
				n++
			}
		}
		e.AnswerNum = n
	}
	al.entries = append(al.entries, e)
	l.s.lent = nil
	l.appended = true
	l.s.feed.Publish(coordination.Change{Steps: true})
	return e.Clone(), nil
}

// LockSession blocks until it holds the session lock or ctx ends.
func (s *Store) LockSession(ctx context.Context, id string) (func(), error) {
	ss, err := s.get(id)
	if err != nil {
		return nil, err
	}
	// A free lock is taken even when ctx has ended, as in the file store.
	select {
	case ss.gate <- struct{}{}:
	default:
		select {
		case ss.gate <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("gave up waiting for the session lock of %q: %w", id, ctx.Err())
		}
	}
	var once sync.Once
	return func() { once.Do(func() { <-ss.gate }) }, nil
}

// LockRun takes the run lock or fails at once with ErrSessionRunning.
func (s *Store) LockRun(ctx context.Context, id string) (func(), error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.running {
		return nil, &coordination.RunningError{Session: id, By: "a loop in this server"}
	}
	ss.running = true
	var once sync.Once
	return func() {
		once.Do(func() {
			ss.mu.Lock()
			ss.running = false
			ss.mu.Unlock()
		})
	}, nil
}

// AppendSession records a session entry and assigns its Seq.
func (s *Store) AppendSession(_ context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	return s.appendSession(id, e, nil)
}

// AppendSessionLeased records a session entry while version is the run's
// claim (coordination.LeasedSessionStore): checked under the mutex the
// lease's changes take.
func (s *Store) AppendSessionLeased(_ context.Context, id string, version int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	return s.appendSession(id, e, &version)
}

// appendSession appends e, first checking the run lease's claim version
// when one is given.
func (s *Store) appendSession(id string, e coordination.SessionEntry, version *int64) (coordination.SessionEntry, error) {
	ss, err := s.get(id)
	if err != nil {
		return e, err
	}
	e = copySessionEntry(e)
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC().Truncate(time.Millisecond)
	ss.mu.Lock()
	if version != nil {
		if err := coordination.HoldsRunLease(id, ss.lease, *version); err != nil {
			ss.mu.Unlock()
			return coordination.SessionEntry{}, err
		}
	}
	e.Seq = len(ss.log) + 1
	ss.log = append(ss.log, e)
	ss.lent = nil
	ss.mu.Unlock()
	ss.feed.Publish(coordination.Change{Session: true})
	return copySessionEntry(e), nil
}

// AppendEvent adds an event to the timeline.
func (s *Store) AppendEvent(_ context.Context, id string, ev coordination.Event) error {
	ss, err := s.get(id)
	if err != nil {
		return err
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Time = ev.Time.UTC().Truncate(time.Millisecond)
	ev.Data = copyAny(ev.Data)
	ss.mu.Lock()
	ss.events = append(ss.events, ev)
	ss.mu.Unlock()
	ss.feed.Publish(coordination.Change{Events: true})
	return nil
}

// Events returns a copy of the timeline.
func (s *Store) Events(ctx context.Context, id string) ([]coordination.Event, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]coordination.Event, len(ss.events))
	for i, ev := range ss.events {
		ev.Data = copyAny(ev.Data)
		out[i] = ev
	}
	return out, nil
}

// SetCriteria replaces the session's criteria.
func (s *Store) SetCriteria(ctx context.Context, id string, items []criteria.Item) error {
	return s.changeSetup(ctx, id, func(next *coordination.Session) {
		next.Criteria = copySession(&coordination.Session{Criteria: items}).Criteria
	})
}

// SetReady records the session's ReadyAt and, given, its creator.
func (s *Store) SetReady(ctx context.Context, id string, at time.Time, by *coordination.Creator) error {
	return s.changeSetup(ctx, id, func(next *coordination.Session) {
		next.ReadyAt = at
		if by != nil {
			c := *by
			next.Creator = &c
		}
	})
}

// changeSetup changes a copy of the session's setup and swaps it in whole,
// so a reader holding the old copy never sees it change.
func (s *Store) changeSetup(ctx context.Context, id string, change func(*coordination.Session)) error {
	ss, err := s.live(ctx, id)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	next := copySession(ss.setup.Load())
	change(next)
	ss.setup.Store(next)
	return nil
}

// SaveView records the view last issued to a host agent.
func (s *Store) SaveView(_ context.Context, id, agent string, v coordination.IssuedView) error {
	ss, err := s.get(id)
	if err != nil {
		return err
	}
	if err := coordination.CheckAgentID(agent); err != nil {
		return err
	}
	v = copyView(v)
	if v.IssuedAt.IsZero() {
		v.IssuedAt = time.Now()
	}
	v.IssuedAt = v.IssuedAt.UTC().Truncate(time.Millisecond)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.views == nil {
		ss.views = make(map[string]coordination.IssuedView)
	}
	ss.views[agent] = v
	return nil
}

// View returns the view last issued to a host agent, nil if none was.
func (s *Store) View(ctx context.Context, id, agent string) (*coordination.IssuedView, error) {
	ss, err := s.liveAgent(ctx, id, agent)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	v, ok := ss.views[agent]
	if !ok {
		return nil, nil
	}
	v = copyView(v)
	return &v, nil
}

// Watch reports the session's changes as they are made, in process.
func (s *Store) Watch(ctx context.Context, id string) (<-chan coordination.Change, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	return ss.feed.Subscribe(ctx, nil), nil
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copySession(s *coordination.Session) *coordination.Session {
	c := *s
	c.Context = append([]string(nil), s.Context...)
	if s.Context == nil {
		c.Context = nil
	}
	if s.Criteria != nil {
		c.Criteria = make([]criteria.Item, len(s.Criteria))
		for i, it := range s.Criteria {
			if it.AntiPatterns != nil {
				it.AntiPatterns = append([]string(nil), it.AntiPatterns...)
			}
			c.Criteria[i] = it
		}
	}
	c.Rules.CostBudgetUSD = copyPtr(s.Rules.CostBudgetUSD)
	c.Rules.TokenBudget = copyPtr(s.Rules.TokenBudget)
	c.Rules.RotateOwnLast = copyPtr(s.Rules.RotateOwnLast)
	c.Rules.BlindFirst = copyPtr(s.Rules.BlindFirst)
	if s.Agents != nil {
		c.Agents = make([]coordination.Agent, len(s.Agents))
		for i, a := range s.Agents {
			a.Temperature = copyPtr(a.Temperature)
			c.Agents[i] = a
		}
	}
	if s.Aliases != nil {
		c.Aliases = make(map[string]int, len(s.Aliases))
		for k, v := range s.Aliases {
			c.Aliases[k] = v
		}
	}
	if s.Review != nil {
		c.Review = slices.Clone(s.Review)
	}
	return &c
}

func copySessionEntry(e coordination.SessionEntry) coordination.SessionEntry {
	if e.Agents != nil {
		e.Agents = append([]string(nil), e.Agents...)
	}
	e.Result = e.Result.Clone()
	if e.Usage != nil {
		u := *e.Usage
		u.CostUSD = copyPtr(u.CostUSD)
		e.Usage = &u
	}
	return e
}

func copyView(v coordination.IssuedView) coordination.IssuedView {
	if v.SeenSteps != nil {
		m := make(map[string]int, len(v.SeenSteps))
		for k, n := range v.SeenSteps {
			m[k] = n
		}
		v.SeenSteps = m
	}
	return v
}

// copyAny copies an event's data map through JSON, which is what the file
// store keeps of it.
func copyAny(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	var out map[string]any
	data, err := json.Marshal(m)
	if err != nil || json.Unmarshal(data, &out) != nil {
		return nil
	}
	return out
}

// EventTail returns a copy of the timeline's latest n events and its length.
func (s *Store) EventTail(ctx context.Context, id string, n int) ([]coordination.Event, int, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	from := max(len(ss.events)-max(n, 0), 0)
	out := make([]coordination.Event, 0, len(ss.events)-from)
	for _, ev := range ss.events[from:] {
		ev.Data = copyAny(ev.Data)
		out = append(out, ev)
	}
	return out, len(ss.events), nil
}
