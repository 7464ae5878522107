package pgstore

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The replica's kept ledgers are bounded twice. loansMax bounds the
// sessions: a running session is read at every derivation, and 4,096 is
// four times the benchmark's thousand concurrent sessions (the service's
// own caps are the same, and for the same reason: an LRU cycled through by
// more keys than it holds misses every time). loansBytesMax bounds what
// they hold, weighed as the kept rows' JSON as stored (about what they take
// decoded): a long session's ledger can be megabytes, and a replica
// serving for weeks must not grow with them. Only live sessions
// are kept: a finished or cancelled one, or one not found, is lent whole
// and takes no place. One let go is read whole again at its next
// derivation, as after a restart.
const (
	loansMax      = 4096
	loansBytesMax = 256 << 20
)

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
// fencing is the appends' own (massgen_hold_lock, the ledger's key), untouched.
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
	l, _, _, err := s.lend(ctx, id, false)
	return l, err
}

var _ coordination.StateLender = (*Store)(nil)

// LendState is LendLedger with the agents whose step lock is held
// (coordination.StateLender), in the same round trip: the locks are read
// in the loan's first statement, before its entries, so a step that landed
// before the read is either in the loan or still holds its lock (its entry
// commits before its lock goes), never neither. A lock held is its row
// unexpired, as InFlight reads it. The calls' holds on the session's
// budget (HoldSpend) that have not expired come in the same statement.
func (s *Store) LendState(ctx context.Context, id string) (*coordination.Ledger, map[string]bool, []coordination.SpendHold, error) {
	return s.lend(ctx, id, true)
}

// lend is LendLedger, and LendState when held asks for the step locks and
// the holds.
func (s *Store) lend(ctx context.Context, id string, held bool) (*coordination.Ledger, map[string]bool, []coordination.SpendHold, error) {
	if err := live(ctx, id); err != nil {
		return nil, nil, nil, err
	}
	asked := time.Now()
	ln := s.db.loans.get(s.tenant, id)
	// The wait is the caller's: a read hung on the database must not hold
	// a status or cancel call past its deadline.
	select {
	case ln.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, nil, fmt.Errorf("waiting to read the ledger of session %q: %w", id, ctx.Err())
	}
	defer func() { <-ln.lock }()
	if ln.lent != nil && ln.sent.After(asked) && (!held || ln.held != nil) {
		// A read sent after this call began, while it waited for the
		// previous one: the database as this call would have read it, or
		// later. Concurrent derivations of one session share one trip
		// (the locks and holds too, when that read asked for them).
		return ln.lent, ln.heldCopy(held), ln.holdsCopy(held), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("reading the ledger of session %q: %w", id, err)
	}
	sent := time.Now()
	// readOn changes what is kept only once a read is whole and continues
	// it, so any other failure (a context ended, the database gone) leaves
	// the kept ledger as it was, for the next call to continue.
	l, _, err := s.readOn(ctx, id, ln, held)
	if errors.Is(err, errStaleLoan) {
		ln.reset()
		var holds []coordination.SpendHold
		l, holds, err = s.readOn(ctx, id, ln, held)
		if errors.Is(err, errStaleLoan) {
			// The rows as stored do not continue each other (an agent's
			// steps with a gap): nothing can be kept, the whole read is
			// what is lent, with the locks and holds that read found
			// (read first, as a loan reads them: a launch from it counts
			// the other replicas' holds as from any loan).
			ln.reset()
			s.db.loans.drop(s.tenant, id, ln)
			var inFlight map[string]bool
			if held {
				if inFlight, err = s.InFlight(ctx, id); err != nil {
					return nil, nil, nil, err
				}
			}
			l, err := s.Ledger(ctx, id)
			if !held {
				holds = nil
			}
			return l, inFlight, holds, err
		}
	}
	if err != nil {
		if errors.Is(err, coordination.ErrSessionNotFound) {
			s.db.loans.drop(s.tenant, id, ln)
		}
		return nil, nil, nil, err
	}
	ln.sent = sent
	// The whole log kept, not only the rows this read added: another call
	// may have read on past an entry before its writer put it in doubt
	// (unheard.go), and this read then finds nothing new.
	s.heardFound(ctx, id, l.Session)
	if ln.ended {
		// A finished or cancelled session is read again only by a status
		// query now and then: it keeps nothing here, so what is kept is
		// the live sessions'.
		s.db.loans.drop(s.tenant, id, ln)
	} else {
		s.db.loans.keep(s.tenant, id, ln)
	}
	return l, ln.heldCopy(held), ln.holdsCopy(held), nil
}

// errStaleLoan says a kept ledger no longer continues into the database's.
var errStaleLoan = errors.New("the kept ledger does not continue into the stored one")

// readOn reads the rows past what ln keeps, appends them and returns the
// loan: the one before when nothing was new. held asks for the agents
// holding their step lock and the calls' holds too (ln.held, ln.holds;
// the holds are returned also with errStaleLoan, read before the rows a
// whole read then lends, so a hold recorded meanwhile is counted twice
// rather than missed). The caller holds ln.lock. The
// read goes with the other sessions' loans asked for meanwhile, in one
// round trip (loanReads).
func (s *Store) readOn(ctx context.Context, id string, ln *loan, held bool) (*coordination.Ledger, []coordination.SpendHold, error) {
	ask := &loanAsk{tenant: s.tenant, id: id, first: ln.lent == nil, held: held, logAfter: int32(len(ln.log))}
	if !ask.first {
		// Every agent of the team (the setup's, kept since the first
		// read), 0 for one with nothing kept: the rows past each are an
		// index range of the ledger's key, not the whole ledger filtered.
		// Only a team's agents have steps (a step lock is taken for an
		// agent of the session's setup).
		for a, es := range ln.agents {
			last := 0
			if n := len(es); n > 0 {
				last = es[n-1].Step
			}
			ask.agents, ask.lasts = append(ask.agents, a), append(ask.lasts, int32(last))
		}
	}
	if err := s.db.loanReads.do(ctx, ask); err != nil {
		return nil, nil, fmt.Errorf("reading the ledger of session %q: %w", id, err)
	}
	if !ask.found {
		return nil, nil, notFound(id)
	}
	if ask.damaged != nil {
		return nil, nil, fmt.Errorf("reading the ledger of session %q: %w", id, ask.damaged)
	}
	created, setup, locked := ask.created, ask.setup, ask.locked
	entries, weight, log, logWeight := ask.entries, ask.weight, ask.log, ask.logWeight
	if ln.lent != nil && !created.Equal(ln.created) {
		return nil, ask.holds, errStaleLoan
	}
	// The step locks go with the loan they were read with (set only once
	// the read is whole): a later call shares them only if this read asked
	// for them, and never longer than it shares the loan (lend).
	var inFlight map[string]bool
	if held {
		inFlight = make(map[string]bool, len(locked))
		for _, a := range locked {
			inFlight[a] = true
		}
	}
	holds := ask.holds
	if ln.lent != nil && len(entries) == 0 && len(log) == 0 {
		ln.held, ln.holds = inFlight, holds
		return ln.lent, holds, nil
	}
	var sess coordination.Session
	if ln.lent == nil {
		if err := json.Unmarshal(setup, &sess); err != nil {
			return nil, nil, fmt.Errorf("session %q is stored damaged: %w", id, err)
		}
	}
	if !ln.continuedBy(entries, log) {
		return nil, ask.holds, errStaleLoan
	}
	if ln.lent == nil {
		ln.created = created
		for _, a := range sess.Agents {
			if _, ok := ln.agents[a.ID]; !ok {
				ln.agents[a.ID] = nil
			}
		}
	}
	for _, e := range entries {
		ln.agents[e.Agent] = append(ln.agents[e.Agent], e)
	}
	ln.bytes += weight + logWeight
	for _, e := range log {
		ln.log = append(ln.log, e)
		switch e.Kind {
		case coordination.SessionFinished, coordination.SessionCancelled:
			ln.ended = true
		case coordination.SessionResumed:
			ln.ended = false
		}
	}
	l := &coordination.Ledger{Agents: make(map[string][]coordination.Entry, len(ln.agents)), Born: ln.created}
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
	ln.lent, ln.held, ln.holds = l, inFlight, holds
	return l, holds, nil
}

// continuedBy tells whether rows read past what ln keeps continue it: each
// agent's first step is one past its last kept (1 when none is kept) and
// the next ones follow, and the session entries' seqs follow the kept log.
func (ln *loan) continuedBy(entries []coordination.Entry, log []coordination.SessionEntry) bool {
	last := map[string]int{}
	for _, e := range entries {
		prev, ok := last[e.Agent]
		if !ok {
			if kept := ln.agents[e.Agent]; len(kept) > 0 {
				prev = kept[len(kept)-1].Step
			}
		}
		if e.Step != prev+1 {
			return false
		}
		last[e.Agent] = e.Step
	}
	for i, e := range log {
		if e.Seq != len(ln.log)+i+1 {
			return false
		}
	}
	return true
}

// loan is one session's ledger as this replica last read it.
type loan struct {
	// lock is held (a value sent) by the one read extending the loan; a
	// channel, so a waiter can give up when its context ends.
	lock    chan struct{}
	created time.Time // the session row's, to know it was not made again
	agents  map[string][]coordination.Entry
	log     []coordination.SessionEntry
	lent    *coordination.Ledger // the latest loan; nil before the first read
	// ended: the log's last word is that the session finished or was
	// cancelled (a resume makes it live again)
	ended bool
	// sent is when the read that made lent was sent (monotonic): a call
	// that began before it may lend what it read without reading again.
	sent time.Time
	// held: the agents holding their step lock as that read found them,
	// nil when it did not ask (LendLedger).
	held map[string]bool
	// holds: the calls' holds on the session's budget as that read found
	// them, nil when there were none or it did not ask.
	holds []coordination.SpendHold
	bytes int64 // what the kept rows weigh, for loansBytesMax
}

func newLoan() *loan {
	return &loan{lock: make(chan struct{}, 1), agents: map[string][]coordination.Entry{}}
}

func (ln *loan) reset() {
	ln.agents = map[string][]coordination.Entry{}
	ln.log, ln.lent, ln.ended, ln.sent, ln.bytes, ln.held, ln.holds = nil, nil, false, time.Time{}, 0, nil, nil
}

// heldCopy is a copy of ln.held when asked for (the caller may change
// it), else nil.
func (ln *loan) heldCopy(asked bool) map[string]bool {
	if !asked {
		return nil
	}
	return maps.Clone(ln.held)
}

// holdsCopy is a copy of ln.holds when asked for, else nil.
func (ln *loan) holdsCopy(asked bool) []coordination.SpendHold {
	if !asked {
		return nil
	}
	return slices.Clone(ln.holds)
}

// loans is the replica's kept ledgers, the least recently read let go
// past loansMax sessions or loansBytesMax bytes.
type loans struct {
	mu    sync.Mutex
	items map[string]*list.Element // of *loanItem, by tenant and session
	order list.List                // most recently read first
	bytes int64                    // the kept loans' weight, as each was last kept
	// maxCount and maxBytes are loansMax and loansBytesMax unless a test
	// sets them smaller.
	maxCount int
	maxBytes int64
}

type loanItem struct {
	key   string
	loan  *loan
	bytes int64
}

func loanKey(tenant, id string) string { return tenant + "\x00" + id }

// get returns the session's kept loan, or a new empty one that is kept
// only once a read shows the session live (keep).
func (ls *loans) get(tenant, id string) *loan {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if el, ok := ls.items[loanKey(tenant, id)]; ok {
		return el.Value.(*loanItem).loan
	}
	return newLoan()
}

// keep records ln, just read, as the session's most recently read loan,
// letting the least recently read go past the bounds (ln itself, if it
// alone weighs more than they allow). The caller holds ln.lock.
func (ls *loans) keep(tenant, id string, ln *loan) {
	k := loanKey(tenant, id)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.items == nil {
		ls.items = map[string]*list.Element{}
	}
	if el, ok := ls.items[k]; ok {
		it := el.Value.(*loanItem)
		ls.bytes += ln.bytes - it.bytes
		it.loan, it.bytes = ln, ln.bytes
		ls.order.MoveToFront(el)
	} else {
		ls.items[k] = ls.order.PushFront(&loanItem{key: k, loan: ln, bytes: ln.bytes})
		ls.bytes += ln.bytes
	}
	maxCount, maxBytes := ls.maxCount, ls.maxBytes
	if maxCount == 0 {
		maxCount = loansMax
	}
	if maxBytes == 0 {
		maxBytes = loansBytesMax
	}
	for len(ls.items) > maxCount || ls.bytes > maxBytes {
		ls.remove(ls.order.Back())
	}
}

// drop lets a session's loan go if ln is the one kept (a session not
// found, finished or cancelled keeps none).
func (ls *loans) drop(tenant, id string, ln *loan) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if el, ok := ls.items[loanKey(tenant, id)]; ok && el.Value.(*loanItem).loan == ln {
		ls.remove(el)
	}
}

func (ls *loans) remove(el *list.Element) {
	it := el.Value.(*loanItem)
	ls.order.Remove(el)
	delete(ls.items, it.key)
	ls.bytes -= it.bytes
}

// len is how many loans are kept.
func (ls *loans) len() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.items)
}

// forget lets a deleted session's loan go.
func (ls *loans) forget(tenant, id string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if el, ok := ls.items[loanKey(tenant, id)]; ok {
		ls.remove(el)
	}
}
