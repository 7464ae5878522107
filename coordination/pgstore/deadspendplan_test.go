package pgstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestTheDeadSpendTakeLooksUpItsRowsByKey: the dead holders' spend take,
// run with its generic plan (TestTheLoansAndEventsKeepTheirPlans), finds
// the session's lock rows and shared spend by their keys, in the plan kept
// from when the tables were empty (as a replica's first run plans it) and
// in one made once they hold thousands of rows, in an outage's excuse or
// none: a scan of the tenant's rows would cost every run's start and
// session's end more than the planning it saves.
func TestTheDeadSpendTakeLooksUpItsRowsByKey(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	conn := genericPlans(t, s)
	const types = "text, text, timestamptz, int8"
	if _, err := conn.Exec(ctx, "PREPARE dead_empty("+types+") AS "+deadSpendTake); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `BEGIN; EXPLAIN EXECUTE dead_empty('x', 'x', NULL, 1); ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if err := s.Create(ctx, storetest.NewSession(fmt.Sprintf("s%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at, spent_cost, spent_tokens)
		SELECT $1, s.id, 'step:agent_' || a, md5(s.id || a), now() - interval '1 hour', 0.01, 100
		FROM sessions s, generate_series(1, 4) a WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO shared_spend (tenant, session_id, spender, agent_id, cost_usd, tokens, reported_at)
		SELECT $1, s.id, md5(s.id || a || 'gone'), 'agent_' || a, 0.01, 100, now() - interval '1 hour'
		FROM sessions s, generate_series(1, 4) a WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	check := func(stmt, when string) {
		t.Helper()
		for _, excuse := range []string{"NULL", "now() - interval '1 minute'"} {
			if _, err := conn.Exec(ctx, `BEGIN`); err != nil {
				t.Fatal(err)
			}
			text := explained(t, conn, fmt.Sprintf(`EXPLAIN EXECUTE %s('%s', 's150', %s, 30000)`, stmt, s.tenant, excuse))
			if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
				t.Fatal(err)
			}
			for _, table := range []string{"locks", "shared_spend"} {
				if strings.Contains(text, "Seq Scan on "+table) {
					t.Errorf("the take, planned %s (excuse %s), scans %s whole:\n%s", when, excuse, table, text)
				}
			}
		}
	}
	check("dead_empty", "on empty tables")
	if _, err := s.db.pool.Exec(ctx, `ANALYZE locks, shared_spend, sessions`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "PREPARE dead_full("+types+") AS "+deadSpendTake); err != nil {
		t.Fatal(err)
	}
	check("dead_full", "on 1,200 rows each")
}
