package pgstore

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A run lease that ran out while the database was unreachable reads held,
// and no claim takes it, until the database has answered for a TTL of the
// lease's since this replica heard it again: its holder, cut off as this
// replica was, renews within that. Before, every replica read the run
// interrupted the moment the database came back from an outage longer than
// a TTL, and one took it over from its live holder. A lease already late
// before the outage, or whose holder had its TTL since, is a dead run's.
func TestALeaseThatRanOutInAnOutageIsLeftToItsHolder(t *testing.T) {
	a, b := replicasSharing(t, "s")
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	held, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("a"), ttl)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl + coordination.MaxClockSkew + 100*time.Millisecond) // ran out, unrenewed
	ownerB := coordination.ThisProcess("b")

	// b lost the database just after a's last renewal and heard it again
	// now: a may be alive and about to renew.
	b.db.outage.lostAt(held.Renewed.Add(50 * time.Millisecond))
	b.db.outage.heard(time.Now())
	l, err := b.ReadRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if l.Abandoned(time.Now()) || !l.Held(time.Now()) {
		t.Errorf("right after the outage a's lease reads abandoned: %+v", l)
	}
	if steps, err := b.ReadSteps(ctx, "s"); err != nil || len(steps) != 0 {
		t.Errorf("ReadSteps = %v, %v", steps, err)
	}
	if _, err := b.AcquireRun(ctx, "s", ownerB, ttl); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("a claim right after the outage = %v, want ErrSessionRunning (a may renew)", err)
	}
	// A statement failing as unreachable marks an outage too: while it
	// goes on, excused; a statement answered (the claim's own read) ends
	// it, and the excuse lasts a TTL from then.
	if !b.Unavailable(io.ErrUnexpectedEOF) {
		t.Fatal("a connection cut mid-answer is not an outage")
	}
	before := time.Now()
	if _, err := b.AcquireRun(ctx, "s", ownerB, ttl); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("a claim as the database comes back = %v, want ErrSessionRunning", err)
	}
	if _, back := b.db.outage.lost, b.db.outage.back; back.Before(before) {
		t.Errorf("a statement answered did not end the outage (back %v)", back)
	}
	// a renews: its claim stands, and is a's.
	if _, err := a.RenewRun(ctx, "s", held.Version, ttl); err != nil {
		t.Fatalf("a's renewal after the outage: %v", err)
	}

	// a dies: once b heard the database a TTL ago, the lease is a dead
	// run's, read and claimed as one.
	time.Sleep(ttl + coordination.MaxClockSkew + 100*time.Millisecond)
	b.db.outage.heard(time.Now().Add(-ttl - coordination.MaxClockSkew - 50*time.Millisecond))
	if l, err := b.ReadRun(ctx, "s"); err != nil || !l.Abandoned(time.Now()) {
		t.Errorf("a TTL after the outage a dead holder's lease reads %+v (%v), want abandoned", l, err)
	}
	// An outage seen over a TTL (and the clock allowance, and the time a
	// silent database takes to be seen) after the lease ran out excuses
	// nothing: its holder was late before it.
	late, err := b.ReadRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	lost := late.Expires.Add(silentFor + ttl + coordination.MaxClockSkew + 50*time.Millisecond)
	b.db.outage.lostAt(lost)
	b.db.outage.heard(lost.Add(10 * time.Millisecond))
	if l, err := b.ReadRun(ctx, "s"); err != nil || !l.Abandoned(time.Now()) {
		t.Errorf("a lease late before the outage reads %+v (%v), want abandoned", l, err)
	}
	if _, err := b.AcquireRun(ctx, "s", ownerB, ttl); err != nil {
		t.Errorf("claiming a dead run's lease: %v", err)
	}
}
