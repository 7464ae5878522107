package pgstore

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// loansMax bounds the sessions whose ledgers a replica keeps: a running
// session is read at every derivation, and 4,096 is four times the
// benchmark's thousand concurrent sessions (the service's own caps are the
// same, and for the same reason: an LRU cycled through by more keys than
// it holds misses every time). A finished session keeps none, so only live
// ones fill it. One let go is read whole again at its next derivation, as
// after a restart.
const loansMax = 4096

var _ coordination.LedgerLender = (*Store)(nil)

// LendLedger returns the session's ledger without reading it all again
// (coordination.LedgerLender). The replica keeps each session's entries as
// it last read them and asks the database, in one round trip, only for the
// rows past them: each agent's steps after its last one kept and the
// session entries after the last seq kept. What it lends is never staler
// than a whole read made at the same moment: every call reads the database,
// and the keeping never writes ahead of it (an entry is kept only once read
// back, never from an append), so another replica's landing is seen by the
// next call, and a replica taking a run over reads what it lacks. The
// fencing is the appends' own (holdsStepLock, the ledger's key), untouched.
//
// It relies on rows being appended in key order and never changed: an
// agent's step n+1 is numbered only after step n committed (under its step
// lock) and a session entry's seq is taken under the session row's lock, so
// a read never sees a later row without the earlier ones. A read that finds
// a gap anyway, or a session whose row was made again (another created_at),
// drops what was kept and reads it all.
//
// Loans share their entries with the keeping and with each other; appends
// only ever write past a loan's length, so a loan never changes and the
// service may memoise what it derived from one (same loan, same state).
func (s *Store) LendLedger(ctx context.Context, id string) (*coordination.Ledger, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	asked := time.Now()
	ln := s.db.loans.get(s.tenant, id)
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if ln.lent != nil && ln.sent.After(asked) {
		// A read sent after this call began, while it waited for the
		// previous one: the database as this call would have read it, or
		// later. Concurrent derivations of one session share one trip.
		return ln.lent, nil
	}
	sent := time.Now()
	l, err := s.readOn(ctx, id, ln)
	if errors.Is(err, errStaleLoan) {
		ln.reset()
		l, err = s.readOn(ctx, id, ln)
	}
	if err != nil {
		// A read that failed part way may have kept some rows without
		// lending them: the next one starts afresh.
		ln.reset()
		if errors.Is(err, coordination.ErrSessionNotFound) {
			s.db.loans.drop(s.tenant, id)
		}
		return nil, err
	}
	ln.sent = sent
	if ln.finished {
		// A finished session is read again only by a status query now and
		// then: it keeps nothing here, so what is kept is the live sessions'.
		s.db.loans.drop(s.tenant, id)
	}
	return l, nil
}

// errStaleLoan says a kept ledger no longer continues into the database's.
var errStaleLoan = errors.New("the kept ledger does not continue into the stored one")

// readOn reads the rows past what ln keeps, appends them and returns the
// loan: the one before when nothing was new. The caller holds ln.mu.
func (s *Store) readOn(ctx context.Context, id string, ln *loan) (*coordination.Ledger, error) {
	agents := make([]string, 0, len(ln.agents))
	lasts := make([]int32, 0, len(ln.agents))
	for a, es := range ln.agents {
		if n := len(es); n > 0 {
			agents, lasts = append(agents, a), append(lasts, int32(es[n-1].Step))
		}
	}
	b := &pgx.Batch{}
	// The setup only on the first read: the team's agents never change.
	b.Queue(`SELECT created_at, CASE WHEN $3 THEN setup END FROM sessions WHERE tenant = $1 AND id = $2`,
		s.tenant, id, ln.lent == nil)
	b.Queue(`SELECT e.entry FROM entries e WHERE e.tenant = $1 AND e.session_id = $2
		AND e.step > coalesce((SELECT k.last FROM unnest($3::text[], $4::int[]) AS k(agent, last) WHERE k.agent = e.agent_id), 0)
		ORDER BY e.agent_id, e.step`, s.tenant, id, agents, lasts)
	b.Queue(`SELECT entry FROM session_log WHERE tenant = $1 AND session_id = $2 AND seq > $3 ORDER BY seq`,
		s.tenant, id, len(ln.log))
	br := s.db.pool.SendBatch(ctx, b)
	defer br.Close()
	var created time.Time
	var setup []byte
	err := br.QueryRow().Scan(&created, &setup)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of session %q: %w", id, err)
	}
	if ln.lent != nil && !created.Equal(ln.created) {
		return nil, errStaleLoan
	}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of session %q: %w", id, err)
	}
	entries, err := collectJSON[coordination.Entry](rows)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of session %q: %w", id, err)
	}
	if rows, err = br.Query(); err != nil {
		return nil, fmt.Errorf("reading the session entries of %q: %w", id, err)
	}
	log, err := collectJSON[coordination.SessionEntry](rows)
	if err != nil {
		return nil, fmt.Errorf("reading the session entries of %q: %w", id, err)
	}
	if ln.lent == nil {
		var sess coordination.Session
		if err := json.Unmarshal(setup, &sess); err != nil {
			return nil, fmt.Errorf("session %q is stored damaged: %w", id, err)
		}
		ln.created = created
		for _, a := range sess.Agents {
			if _, ok := ln.agents[a.ID]; !ok {
				ln.agents[a.ID] = nil
			}
		}
	} else if len(entries) == 0 && len(log) == 0 {
		return ln.lent, nil
	}
	for _, e := range entries {
		kept := ln.agents[e.Agent]
		if n := len(kept); n > 0 && e.Step != kept[n-1].Step+1 {
			return nil, errStaleLoan
		}
		ln.agents[e.Agent] = append(kept, e)
	}
	for _, e := range log {
		if e.Seq != len(ln.log)+1 {
			return nil, errStaleLoan
		}
		ln.log = append(ln.log, e)
		ln.finished = ln.finished || e.Kind == coordination.SessionFinished
	}
	l := &coordination.Ledger{Agents: make(map[string][]coordination.Entry, len(ln.agents))}
	for a, es := range ln.agents {
		n := len(es)
		l.Agents[a] = es[:n:n]
		if es == nil {
			l.Agents[a] = []coordination.Entry{}
		}
	}
	if n := len(ln.log); n > 0 {
		l.Session = ln.log[:n:n]
	}
	ln.lent = l
	return l, nil
}

// loan is one session's ledger as this replica last read it.
type loan struct {
	mu      sync.Mutex // one read at a time extends it
	created time.Time  // the session row's, to know it was not made again
	agents  map[string][]coordination.Entry
	log     []coordination.SessionEntry
	lent    *coordination.Ledger // the latest loan; nil before the first read
	// finished: the log has the session's finished entry
	finished bool
	// sent is when the read that made lent was sent (monotonic): a call
	// that began before it may lend what it read without reading again.
	sent time.Time
}

func (ln *loan) reset() {
	ln.agents = map[string][]coordination.Entry{}
	ln.log, ln.lent, ln.finished, ln.sent = nil, nil, false, time.Time{}
}

// loans is the replica's kept ledgers, the least recently read let go
// past loansMax.
type loans struct {
	mu    sync.Mutex
	items map[string]*list.Element // of *loanItem, by tenant and session
	order list.List                // most recently read first
}

type loanItem struct {
	key  string
	loan *loan
}

func loanKey(tenant, id string) string { return tenant + "\x00" + id }

// get returns the session's loan, a new empty one if none is kept.
func (ls *loans) get(tenant, id string) *loan {
	k := loanKey(tenant, id)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.items == nil {
		ls.items = map[string]*list.Element{}
	}
	if el, ok := ls.items[k]; ok {
		ls.order.MoveToFront(el)
		return el.Value.(*loanItem).loan
	}
	if len(ls.items) >= loansMax {
		oldest := ls.order.Back()
		ls.order.Remove(oldest)
		delete(ls.items, oldest.Value.(*loanItem).key)
	}
	ln := &loan{agents: map[string][]coordination.Entry{}}
	ls.items[k] = ls.order.PushFront(&loanItem{key: k, loan: ln})
	return ln
}

// drop lets a session's loan go (a session not found keeps none).
func (ls *loans) drop(tenant, id string) {
	k := loanKey(tenant, id)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if el, ok := ls.items[k]; ok {
		ls.order.Remove(el)
		delete(ls.items, k)
	}
}

// len is how many loans are kept.
func (ls *loans) len() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.items)
}
