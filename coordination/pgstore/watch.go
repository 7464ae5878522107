package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A change is told twice: to this process's watchers at once, and to every
// replica by a NOTIFY sent in the change's transaction (so it arrives only
// if the change committed). The payload is "<tenant> <session> <flags>",
// flags from "s" (a step), "l" (a session entry), "e" (an event), "p" (an ask or a decision). The
// channel is named for the schema, so stores in two schemas of one database
// do not hear each other.

// feeds is the sessions being watched in this process: tenant/id → feed.
type feeds struct {
	mu sync.Mutex
	m  map[string]*watched
}

type watched struct {
	feed coordination.Feed
	refs int
}

func (f *feeds) init() { f.m = map[string]*watched{} }

func (f *feeds) publish(tenant, id string, c coordination.Change) {
	f.mu.Lock()
	w := f.m[tenant+"/"+id]
	f.mu.Unlock()
	if w != nil {
		w.feed.Publish(c)
	}
}

// publishAll tells every watcher to read again (the listener reconnected
// and may have missed notifications).
func (f *feeds) publishAll() {
	f.mu.Lock()
	all := make([]*watched, 0, len(f.m))
	for _, w := range f.m {
		all = append(all, w)
	}
	f.mu.Unlock()
	for _, w := range all {
		w.feed.Publish(coordination.Change{Steps: true, Session: true, Events: true})
	}
}

// subscribe watches tenant/id until ctx ends; the last watcher of a
// session drops its entry, so the map holds only watched sessions.
func (f *feeds) subscribe(ctx context.Context, tenant, id string) <-chan coordination.Change {
	key := tenant + "/" + id
	f.mu.Lock()
	w := f.m[key]
	if w == nil {
		w = &watched{}
		f.m[key] = w
	}
	w.refs++
	f.mu.Unlock()
	return w.feed.Subscribe(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if w.refs--; w.refs == 0 {
			delete(f.m, key)
		}
	})
}

// Watch reports every change to the session made by any replica sharing
// the database, until ctx ends.
func (s *Store) Watch(ctx context.Context, id string) (<-chan coordination.Change, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	if err := s.exists(ctx, s.db.pool, id); err != nil {
		return nil, err
	}
	return s.db.feeds.subscribe(ctx, s.tenant, id), nil
}

// notifyCommitted tells every replica of a change already committed (a
// permission decision, an ask, its answer: rows written outside a step's
// transaction; a landing or session entry whose own NOTIFY, after its
// COMMIT, was lost with its connection, at once if the COMMIT's answer
// came, else once the landing's retry, the next read of the log or, for
// a permission change, the replica's own look finds it: storedIs,
// unheard.go). A NOTIFY lost here only delays a view until
// the session's next change (a follower's poll, within a second), so its
// failure is logged, not returned.
func (s *Store) notifyCommitted(ctx context.Context, id string, c coordination.Change) {
	if _, err := s.db.pool.Exec(ctx, notifyOne, s.db.channel, s.changePayload(id, c)); err != nil {
		s.db.log.Debug().Err(err).Str("session", id).Msg("could not tell the other replicas of a change; their views catch up at the next change")
	}
}

// changePayload is a change as the NOTIFY payload says it: tenant,
// session and what changed.
func (s *Store) changePayload(id string, c coordination.Change) string {
	flags := ""
	if c.Steps {
		flags += "s"
	}
	if c.Session {
		flags += "l"
	}
	if c.Events {
		flags += "e"
	}
	if c.Permissions {
		flags += "p"
	}
	return s.tenant + " " + id + " " + flags
}

// listen holds a connection LISTENing on the schema's channel and hands
// each notification to this process's watchers, reconnecting when the
// connection is lost. ready gets the first LISTEN's outcome: Open returns
// only once changes are heard, so a watch covers every change after it.
//
// An outage is logged once as it begins and once as it ends, not at each
// try (every 500 ms): a replica cut off for a minute logged 120 lines.
func (db *DB) listen(ctx context.Context, ready chan<- error) {
	defer db.done.Done()
	first := true
	var lostAt time.Time // when the connection was lost; zero while heard
	for ctx.Err() == nil {
		err := db.listenOnce(ctx, func() {
			if first {
				first = false
				ready <- nil
				return
			}
			if !lostAt.IsZero() {
				db.log.Info().Dur("after", time.Since(lostAt)).Msg("hearing other replicas' changes again")
				lostAt = time.Time{}
				db.outage.heard(time.Now())
			}
			db.feeds.publishAll()
		})
		if first {
			ready <- err
			return
		}
		if ctx.Err() != nil {
			return
		}
		if lostAt.IsZero() {
			lostAt = time.Now()
			db.outage.lostAt(lostAt)
			db.log.Warn().Err(err).Msg("lost the PostgreSQL connection that hears other replicas' changes; reconnecting every 500 ms")
		} else {
			db.log.Debug().Err(err).Msg("still reconnecting to hear other replicas' changes")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context, listening func()) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection is LISTENing: it never goes back to the pool.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	// An idle connection of the pool was checked read-write only as it was
	// made: after a failover it may be on the old primary still.
	if err := db.hearing.onWritable(ctx, pc); err != nil {
		return err
	}
	if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{db.channel}.Sanitize()); err != nil {
		return err
	}
	// Held while this connection lives: other replicas see this one alive
	// by it (liveness.go). A registration the database refuses (a role
	// that may not write the replicas table) leaves this replica seen dead
	// only when its leases run out, as before; it still hears changes. A
	// lock not taken is a connection lost: listening without it, this
	// replica would read dead while registered.
	if err := db.holdLivenessUnlessBrief(ctx, pc); err != nil {
		var refused notRegistered
		if !errors.As(err, &refused) {
			return err
		}
		db.log.Warn().Err(err).Msg("other replicas will see this one dead only when its leases run out, not when its process goes")
	}
	listening()
	if db.hearing.listening != nil {
		if err := db.hearing.listening(ctx, pc); err != nil {
			return err
		}
	}
	w := db.hearing.waiting(ctx)
	defer w.stop()
	for {
		n, err := w.next(pc)
		if err != nil {
			return err
		}
		tenant, rest, _ := strings.Cut(n.Payload, " ")
		id, flags, _ := strings.Cut(rest, " ")
		db.feeds.publish(tenant, id, coordination.Change{
			Steps:   strings.Contains(flags, "s"),
			Session: strings.Contains(flags, "l"),
			Events:  strings.Contains(flags, "e"),
			// An ask raised or answered, a decision audited.
			Permissions: strings.Contains(flags, "p"),
		})
	}
}

// listenQuiet is how long the LISTEN connection may hear nothing before it
// asks whether its server still takes writes. A failover behind a proxy
// (HAProxy, a cloud's endpoint) can leave it on the old primary, kept
// alive read-only: NOTIFY is sent only where writes are made, so there it
// would hear nothing, silently, for as long as it lived, and no watcher of
// this replica (a polling client, a blocking run_team, a cancel from
// another replica) would hear another's change. A connection that hears
// changes is on a server that takes them and is not asked.
const listenQuiet = 5 * time.Second

// hearing is how the LISTEN connection waits (listenOnce).
type hearing struct {
	quiet     time.Duration                                // listenQuiet, or Options.listenQuiet
	listening func(ctx context.Context, c *pgx.Conn) error // Options.listening
}

// quietWait is the LISTEN connection's wait for its notifications: one
// deadline a quiet spell, where a deadline a notification (a context and
// its timer, some 5 objects, at every change another replica makes)
// was most of what hearing cost.
type quietWait struct {
	h      hearing
	ctx    context.Context // the connection's
	wait   context.Context // ends quiet after the spell began; nil when none is running
	cancel context.CancelFunc
	heard  time.Time // when the spell began: the last notification, or the last ask
}

// waiting starts the connection's first quiet spell now.
func (h hearing) waiting(ctx context.Context) *quietWait {
	return &quietWait{h: h, ctx: ctx, heard: time.Now()}
}

// next waits for conn's next notification. After quiet without one it
// asks the server whether it takes writes, as each pool connection is
// asked when it is made (requireWritable), and waits again if it does; if
// it does not, the error says so, and listen makes a new connection. A
// notification heard starts the spell again; the deadline running is kept
// and, when it ends, moved to quiet after the last notification.
func (w *quietWait) next(conn *pgx.Conn) (*pgconn.Notification, error) {
	for {
		if w.wait == nil {
			w.wait, w.cancel = context.WithDeadline(w.ctx, w.heard.Add(w.h.quiet))
		}
		n, err := conn.WaitForNotification(w.wait)
		if err == nil {
			w.heard = time.Now()
			return n, nil
		}
		// Only the quiet spell's own deadline: a socket's timeout (a dead
		// peer, dial.go) is a lost connection, made again by listen.
		if w.ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return n, err
		}
		w.stop()
		if time.Since(w.heard) < w.h.quiet {
			continue // a notification came during the spell: wait out the rest of the new one
		}
		if err := w.h.onWritable(w.ctx, conn); err != nil {
			return nil, err
		}
		w.heard = time.Now()
	}
}

// stop ends the deadline running, if any.
func (w *quietWait) stop() {
	if w.cancel != nil {
		w.cancel()
	}
	w.wait, w.cancel = nil, nil
}

// onWritable asks conn's server whether it takes writes. Not within
// pingTimeout: a busy database slow to answer is not a reason to drop the
// connection and count an outage.
func (h hearing) onWritable(ctx context.Context, conn *pgx.Conn) error {
	ask, cancel := context.WithTimeout(ctx, lateAnswer)
	defer cancel()
	err := pgconn.ValidateConnectTargetSessionAttrsReadWrite(ask, conn.PgConn())
	if readOnly(err) {
		return fmt.Errorf("the connection for hearing other replicas' changes is on a server that takes no writes, where none are made (a failover's old primary, kept by a proxy?): %w", err)
	}
	return err
}
