package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// REVIEW (rev-outage): each statement answered more than lateAnswer (5 s)
// late is an outage learnt of once it is over (answerWatch ->
// outageSeen.spanned). DESIGN/answerwatch.go: such a slow statement "costs
// only a takeover deferred by a TTL". But spanned joins every later one
// that begins within joinWithin (11 s) of the last one's end and keeps the
// FIRST one's start as lost, so a replica whose statements are slow now
// and then (a big snapshot, a prune, a lock wait every few seconds) keeps
// one "outage" open whose excuse reaches back to the first slow statement
// (less silentFor and a TTL): a run whose replica died a minute ago, long
// after the first slow statement and far from any of them, reads held
// (Alive) on this replica, its claim is refused, and this replica does not
// reap (look skips while lockTakeover() != nil) for as long as the slow
// statements keep coming. Dead runs look alive, and nobody takes them up.
func TestReviewSlowStatementsNowAndThenKeepADeadRunAliveForAsLongAsTheyCome(t *testing.T) {
	a, b := replicasSharing(t, "s")
	ctx := context.Background()
	if _, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("a"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Its holder died a minute ago: last renewed 70 s ago, expired 60 s ago.
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET claimed_at = now() - interval '70 seconds',
		renewed_at = now() - interval '70 seconds', expires_at = now() - interval '60 seconds' WHERE session_id = 's' AND agent_id = ''`); err != nil {
		t.Fatal(err)
	}
	a.db.written.forget(a.tenant, "s")

	// b, over the last 100 s, had a statement answered 6 s late every 10 s
	// (sent 100, 90, ..., 10 s ago).
	now := time.Now()
	for at := 100 * time.Second; at >= 6*time.Second; at -= 10 * time.Second {
		b.db.outage.spanned(now.Add(-at), now.Add(-at+6*time.Second))
	}
	// The last slow statement alone (sent 10 s ago) would excuse only
	// leases that ran out within silentFor+TTL+skew (31 s) before it was
	// sent, not this one (60 s ago); the chain keeps the first one's start.
	lost, back := b.db.outage.span()
	t.Logf("b's outage as the excuse counts it: lost %s ago, back %s ago", time.Since(lost).Round(time.Second), time.Since(back).Round(time.Second))

	// Control: the last slow statement on its own excuses nothing here.
	raw, err := a.ReadRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var alone outageSeen
	alone.spanned(now.Add(-10*time.Second), now.Add(-4*time.Second))
	if l, bk := alone.span(); coordination.ExcusedByOutage(raw, l, bk, time.Now()) {
		t.Fatal("control: the last slow statement alone excuses the dead lease; the test proves nothing")
	}

	l, err := b.ReadRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if l.Held(time.Now()) {
		t.Errorf("a run whose holder died 60 s ago reads held (Alive=%v) on b, whose database was never more than 6 s late", l.Alive)
	}
	if _, err := b.AcquireRun(ctx, "s", coordination.ThisProcess("b"), 10*time.Second); errors.Is(err, coordination.ErrSessionRunning) {
		t.Errorf("b may not take up the dead run: %v", err)
	}
	if b.db.lockTakeover() != nil {
		t.Errorf("b does not reap dead replicas now (an outage's excuse runs)")
	}
}
