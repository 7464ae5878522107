package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// lateAnswer is how long a statement's answer may take before the wait
// counts as an outage of the database (answerWatch). A database cut off for
// less than silentFor fails no statement (dial.go): its statements are
// answered once it is back, late, and a holder's lease may have run out
// meanwhile. Half a lock's TTL: a cut shorter than that cannot make a
// lease renewed every third of its TTL run out, and no statement of ours
// takes that long against a database that answers (a landing's p99 under
// the overhead bench's 1,000 sessions on two shared cores: 0.6 s). A
// statement that does (a lock waited on, a large prune) costs only the
// takeover of a lease that ran out near it, deferred by a TTL: late
// answers are not joined into one outage, however often they come
// (outageSeen), and hold no reap off.
const lateAnswer = lockTTL / 2

// answerWatch hears of every statement and batch the pools send
// (pgx.QueryTracer, pgx.BatchTracer) and tells what each answer says of
// the database: one answered more than after late is an outage
// (outageSeen.spanned) from when it was sent to when it was answered, for
// the database did not answer this replica for that long and other
// holders may not have reached it either; one refused as read-only marks
// its connection to be closed (readonly.go). It passes each event on to
// next (Options.Tracer), if any.
type answerWatch struct {
	seen  *outageSeen
	after time.Duration
	next  pgx.QueryTracer
}

var (
	_ pgx.QueryTracer = (*answerWatch)(nil)
	_ pgx.BatchTracer = (*answerWatch)(nil)
)

// sentAt is the context key of when a statement or batch was sent.
type sentAt struct{}

// sentCtx carries when a statement or batch was sent, in one object where
// context.WithValue made two (its context and the boxed time): the pools
// trace every statement of every step.
type sentCtx struct {
	context.Context
	at time.Time
}

func (c *sentCtx) Value(key any) any {
	if _, ok := key.(sentAt); ok {
		return c.at
	}
	return c.Context.Value(key)
}

// sentTime is when the statement or batch traced in ctx was sent.
func sentTime(ctx context.Context) (time.Time, bool) {
	if c, ok := ctx.(*sentCtx); ok {
		return c.at, true
	}
	t, ok := ctx.Value(sentAt{}).(time.Time)
	return t, ok
}

func (t *answerWatch) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.next != nil {
		ctx = t.next.TraceQueryStart(ctx, conn, data)
	}
	return &sentCtx{Context: ctx, at: time.Now()}
}

func (t *answerWatch) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	markReadOnly(conn, data.Err)
	t.answered(ctx, data.Err)
	if t.next != nil {
		t.next.TraceQueryEnd(ctx, conn, data)
	}
}

func (t *answerWatch) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if bt, ok := t.next.(pgx.BatchTracer); ok {
		ctx = bt.TraceBatchStart(ctx, conn, data)
	}
	return &sentCtx{Context: ctx, at: time.Now()}
}

func (t *answerWatch) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	markReadOnly(conn, data.Err)
	if bt, ok := t.next.(pgx.BatchTracer); ok {
		bt.TraceBatchQuery(ctx, conn, data)
	}
}

func (t *answerWatch) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	markReadOnly(conn, data.Err)
	t.answered(ctx, data.Err)
	if bt, ok := t.next.(pgx.BatchTracer); ok {
		bt.TraceBatchEnd(ctx, conn, data)
	}
}

// answered tells seen what a statement's answer, or its failure, says of
// the database. One answered late marks an outage from when it was sent to
// when it was answered; one that failed late as unreachable marks one from
// when it was sent, going on (Store.Unavailable, told of the failure next,
// would mark it only from now). One answered in time ends an outage going
// on, as a lease read does. A failure in time says nothing this replica's
// callers do not tell (Unavailable), nor does a late one of another kind
// (a cancelled wait, the database's own error).
func (t *answerWatch) answered(ctx context.Context, err error) {
	sent, ok := sentTime(ctx)
	if !ok {
		return
	}
	now := time.Now()
	late := now.Sub(sent) > t.after
	switch {
	case err == nil && late:
		t.seen.spanned(sent, now)
	case err == nil:
		t.seen.heard(now)
	case late && unavailable(err):
		t.seen.lostAt(sent)
	}
}
