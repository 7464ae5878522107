package pgstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestTheLoansAndEventsKeepTheirPlans: the loans' three reads and the
// timeline's group write, sent again and again on a connection, run the
// generic plan its prepared statement keeps instead of being planned anew
// at every call. Each reads its asks from arrays (unnest), and PostgreSQL's
// plan cache prices a generic plan for an array of unknown length at 100
// rows against a custom plan's handful, so it planned them afresh at every
// call, for good: at 200 sessions in pg_stat_statements the loans' reads
// had as many plans as calls, a quarter of a millisecond each, and
// planning was about a fifth of PostgreSQL's time a step. Their generic
// plans look each row up by its key (TestBatchedStatementsLookUpTheirRowsByKey),
// so the custom plans buy nothing. The dead holders' spend take
// (deadSpendTake, at every run's start and session's end) takes 2 ms to
// plan: PostgreSQL's first five calls on each connection, custom plans,
// were most of its calls at 200 sessions (152 plans over 200 calls); its
// generic plan looks its rows up by key (TestTheDeadSpendTakeLooksUpItsRowsByKey).
// The leases' read (readLeases: the run's at a run's look, the steps' at
// every landing's fence) was planned at most calls too, 140-147 plans over
// 200 calls at 200 sessions, 0.5-0.9 ms each; its generic plan looks its
// rows up by key (TestTheLeasesReadLooksUpItsRowsByKey).
// pg_prepared_statements counts, per connection, the plans each prepared
// statement ran.
func TestTheLoansAndEventsKeepTheirPlans(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := s.Create(ctx, storetest.NewSession("s1")); err != nil {
		t.Fatal(err)
	}
	const calls = 12
	for i := range calls {
		ask := &loanAsk{tenant: s.tenant, id: "s1", first: true, held: true}
		if errs := s.db.readLoans(ctx, []*loanAsk{ask}); errs[0] != nil {
			t.Fatal(errs[0])
		}
		if !ask.found {
			t.Fatal("the loan did not find its session")
		}
		if err := s.AppendEvent(ctx, "s1", coordination.Event{Time: time.Now(), Type: "note", Message: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TakeDeadSpend(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadRun(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadSteps(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
	}
	watched := map[string]string{
		loanSessionsRead:         "the loans' sessions read",
		loanEntriesRead:          "the loans' entries read",
		loanLogRead:              "the loans' session entries read",
		eventsInsert:             "the timeline's group write",
		deadSpendTake:            "the dead holders' spend take",
		leasesRead(true, false):  "the run's lease read",
		leasesRead(false, false): "the step leases' read",
	}
	generic, custom := map[string]int64{}, map[string]int64{}
	// Every connection's count: the pool's own work (a replica's
	// background reads) may hold one for a moment.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if st := s.db.pool.Stat(); st.IdleConns() == st.TotalConns() {
			break
		}
	}
	conns := s.db.pool.AcquireAllIdle(ctx)
	for _, c := range conns {
		rows, err := c.Query(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var q string
			var g, cu int64
			if err := rows.Scan(&q, &g, &cu); err != nil {
				t.Fatal(err)
			}
			generic[q] += g
			custom[q] += cu
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
	for q, name := range watched {
		if custom[q] != 0 || generic[q] < calls {
			t.Errorf("%s: %d generic plans run and %d custom plans made over %d calls; want none made, the generic plan run every time", name, generic[q], custom[q], calls)
		}
	}
}
