package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// A statement answered more than lateAnswer late is an outage learnt of
// once it is over (answerWatch, outageSeen.spanned), which excuses the
// leases that ran out near it, and costs a dead holder's takeover a TTL.
// Slow statements now and then (a big snapshot, a prune, a lock waited on,
// every few seconds) each excuse what ran out near them, not everything
// since the first: a run whose holder died a minute ago, far from any of
// them, reads interrupted, is claimed, and dead replicas are reaped. Before,
// each one that began within joinWithin of the last one's end was joined to
// it, the outage kept the first one's start, and for as long as they came
// the dead run read running on this replica, every claim of it was refused
// and this replica reaped none.
func TestSlowStatementsNowAndThenDoNotKeepADeadRunAlive(t *testing.T) {
	a, b := replicasSharing(t, "s")
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("near")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("a"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Its holder died a minute ago: last renewed 70 s ago, expired 60 s ago.
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET claimed_at = now() - interval '70 seconds',
		renewed_at = now() - interval '70 seconds', expires_at = now() - interval '60 seconds' WHERE session_id = 's' AND agent_id = ''`); err != nil {
		t.Fatal(err)
	}
	a.db.written.forget(a.tenant, "s")
	// Another's, whose lease ran out 20 s ago, while the last slow
	// statement's cut may have begun (silentFor before it was sent).
	if _, err := a.AcquireRun(ctx, "near", coordination.ThisProcess("a"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET claimed_at = now() - interval '30 seconds',
		renewed_at = now() - interval '30 seconds', expires_at = now() - interval '20 seconds' WHERE session_id = 'near' AND agent_id = ''`); err != nil {
		t.Fatal(err)
	}
	a.db.written.forget(a.tenant, "near")

	// b, over the last 100 s, had a statement answered 6 s late every 10 s
	// (sent 100, 90, ..., 10 s ago).
	now := time.Now()
	for at := 100 * time.Second; at >= 6*time.Second; at -= 10 * time.Second {
		b.db.outage.spanned(now.Add(-at), now.Add(-at+6*time.Second))
	}
	// The last slow statement (sent 10 s ago) excuses only leases that ran
	// out within silentFor+TTL+skew (31 s) before it was sent, not the dead
	// run's (60 s ago); joined, they would keep the first one's start.
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
	if since := b.db.lockTakeover(); since != nil && !raw.Expires.Before(*since) {
		t.Errorf("b leaves a lock row that ran out with the dead run's lease (%s ago) to its holder: rows ran out since %s ago are excused",
			time.Since(raw.Expires).Round(time.Second), time.Since(*since).Round(time.Second))
	}
	if b.db.reapHeldOff() {
		t.Errorf("b does not reap dead replicas now (an outage's excuse runs)")
	}
	// What ran out near the last slow statement is still left to its
	// holder, which may have been cut off as b was.
	if l, err := b.ReadRun(ctx, "near"); err != nil || !l.Held(time.Now()) {
		t.Errorf("a lease that ran out just before the last slow statement reads %+v (%v) on b, want held", l, err)
	}
}

// Statements held by one cut are one late answer, from the first one's
// sending; slow statements that overlap one another without end (each
// sent before the last was answered) are not one cut, for a cut that fails
// no statement is shorter than silentFor: the late answer reaches back no
// further than that before the last one's sending.
func TestOverlappingSlowStatementsReachBackNoFurtherThanACut(t *testing.T) {
	var o outageSeen
	cut := time.Now().Add(-time.Minute)
	o.spanned(cut, cut.Add(12*time.Second))
	o.spanned(cut.Add(3*time.Second), cut.Add(12100*time.Millisecond))
	if !o.late.lost.Equal(cut) || !o.late.back.Equal(cut.Add(12100*time.Millisecond)) {
		t.Errorf("two statements held by one cut: late answer %v to %v, want %v to %v", o.late.lost, o.late.back, cut, cut.Add(12100*time.Millisecond))
	}
	now := time.Now()
	for at := 100 * time.Second; at >= 10*time.Second; at -= 5 * time.Second {
		o.spanned(now.Add(-at), now.Add(-at+6*time.Second))
	}
	if last := now.Add(-10 * time.Second); o.late.lost.Before(last.Add(-silentFor)) {
		t.Errorf("slow statements overlapping for 90 s: the late answer reaches back %s before the last one's sending, want at most %s",
			last.Sub(o.late.lost), silentFor)
	}
}
