package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// countedReplica opens a replica on dsn whose round trips c counts.
func countedReplica(t *testing.T, dsn string, c pgx.QueryTracer) *Store {
	return replicaOn(t, dsn, Options{Tracer: c})
}

// TestInFlightIsOneRoundTrip: telling an idle session from a missing one
// costs no second query.
func TestInFlightIsOneRoundTrip(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	before := c.Count()
	held, err := a.InFlight(ctx, "s")
	if err != nil || len(held) != 0 {
		t.Fatalf("InFlight of an idle session = %v, %v; want none", held, err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("InFlight of an idle session took %d round trips, want 1", n)
	}
	if _, err := a.InFlight(ctx, "missing"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("InFlight of a missing session = %v, want ErrSessionNotFound", err)
	}
}

// TestReadingLeasesIsOneRoundTrip: a landing's fence reads the step leases
// at every step; they come with the session's existence and the live step
// locks that make a lease Alive in one statement.
func TestReadingLeasesIsOneRoundTrip(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	lock, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("test"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AcquireStep(ctx, "s", "agent_b", coordination.ThisProcess("test"), time.Minute); err != nil {
		t.Fatal(err)
	}
	before := c.Count()
	all, err := a.ReadSteps(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("ReadSteps took %d round trips, want 1", n)
	}
	if len(all) != 2 || !all["agent_a"].Alive || all["agent_b"].Alive {
		t.Errorf("step leases %+v; want agent_a's alive (its step lock is held) and agent_b's not", all)
	}
	before = c.Count()
	if run, err := a.ReadRun(ctx, "s"); err != nil || run != nil {
		t.Errorf("ReadRun of a session never run = %+v, %v; want none", run, err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("ReadRun took %d round trips, want 1", n)
	}
	if _, err := a.ReadSteps(ctx, "missing"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("ReadSteps of a missing session = %v, want ErrSessionNotFound", err)
	}
}

// TestALeaseChangeIsOneRoundTrip: a step claims its lease and releases it
// every time; the first claim inserts the row, the release writes over the
// row as claimed, one round trip each (leases_roundtrips_test.go has the
// rest).
func TestALeaseChangeIsOneRoundTrip(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	before := c.Count()
	l, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("test"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("AcquireStep took %d round trips, want 1", n)
	}
	before = c.Count()
	if err := a.ReleaseStep(ctx, "s", "agent_a", l.Version); err != nil {
		t.Fatal(err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("ReleaseStep of the claim just made took %d round trips, want 1", n)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", l.Version+1); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("releasing another version = %v, want ErrLeaseLost", err)
	}
	if _, err := a.AcquireStep(ctx, "missing", "agent_a", coordination.ThisProcess("test"), time.Minute); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("claiming in a missing session = %v, want ErrSessionNotFound", err)
	}
}

// TestRenewalsGoTogether: the heartbeats' renewals made within a window go
// in one transaction of two round trips, each answered on its own: a lease
// claimed by another holder meanwhile is lost, and says so, while the
// others renew; a session that is not stored is not found.
func TestRenewalsGoTogether(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	owner := coordination.ThisProcess("test")
	versions := map[string]int64{}
	for _, id := range []string{"s1", "s2", "s3", "s4"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		l, err := a.AcquireStep(ctx, id, "agent_a", owner, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		versions[id] = l.Version
	}
	// s4's lease moved on: released, then claimed again (another version).
	if err := a.ReleaseStep(ctx, "s4", "agent_a", versions["s4"]); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AcquireStep(ctx, "s4", "agent_a", owner, time.Minute); err != nil {
		t.Fatal(err)
	}
	before := c.Count()
	a.db.renewals.manual = true
	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	for _, id := range []string{"s1", "s2", "s3", "s4", "missing"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := a.RenewStep(ctx, id, "agent_a", versions[id], time.Minute)
			if err == nil && l.Version != versions[id] {
				err = fmt.Errorf("renewed to version %d, want %d", l.Version, versions[id])
			}
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		}()
	}
	gathered(t, a, 5)
	wg.Wait()
	for _, id := range []string{"s1", "s2", "s3"} {
		if errs[id] != nil {
			t.Errorf("renewing %s: %v", id, errs[id])
		}
	}
	if !errors.Is(errs["s4"], coordination.ErrLeaseLost) {
		t.Errorf("renewing a lease claimed again since = %v, want ErrLeaseLost", errs["s4"])
	}
	if !errors.Is(errs["missing"], coordination.ErrSessionNotFound) {
		t.Errorf("renewing in a missing session = %v, want ErrSessionNotFound", errs["missing"])
	}
	if n := c.Count() - before; n != 2 {
		t.Errorf("five renewals at once took %d round trips, want 2 (one transaction)", n)
	}
	all, err := a.ReadSteps(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if l := all["agent_a"]; l == nil || time.Until(l.Expires) < 50*time.Second {
		t.Errorf("s1's lease after its renewal: %+v; want it expiring a minute from now", l)
	}
}

// TestQueryCountsTellKindsApart: the bench's breakdown counts a query by its
// SQL, whitespace folded, and a batch by its queries together, most first.
func TestQueryCountsTellKindsApart(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	before := c.Count()
	for range 3 {
		if _, err := a.InFlight(ctx, "s"); err != nil {
			t.Fatal(err)
		}
	}
	b := &pgx.Batch{}
	b.Queue("SELECT\n\t1")
	b.Queue("SELECT 2")
	if err := a.db.pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if n := c.Count() - before; n != 4 {
		t.Errorf("%d round trips counted, want 4 (three queries and a batch)", n)
	}
	top := c.Top(100, 20)
	var inFlight, batch int64
	for _, q := range top {
		if q.Kind == "SELECT substr(l.name…" {
			inFlight = q.Count
		}
		if q.Kind == "[SELECT 1 | SELECT 2]" {
			batch = q.Count
		}
	}
	if inFlight != 3 || batch != 1 {
		t.Errorf("InFlight counted %d times and the batch %d in %+v; want 3 and 1", inFlight, batch, top)
	}
	for i := 1; i < len(top); i++ {
		if top[i].Count > top[i-1].Count {
			t.Errorf("Top is not most first: %+v", top)
		}
	}
	if len(c.Top(1, 20)) != 1 {
		t.Error("Top(1) did not cut to one kind")
	}
}
