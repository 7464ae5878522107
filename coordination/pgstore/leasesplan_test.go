package pgstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestTheLeasesReadLooksUpItsRowsByKey: the leases' read (readLeases), run
// with its generic plan (TestTheLoansAndEventsKeepTheirPlans), finds the
// session's row, its leases and its step lock rows by their keys, in each
// of its four forms (the run's lease or all, a command's look at whether
// holders are gone or not), in the plan kept from when the tables were
// empty (as a replica's first run plans it) and in one made once they hold
// thousands of rows: every landing's fence reads it, and a scan of the
// tenant's rows would cost each step more than the planning it saves.
func TestTheLeasesReadLooksUpItsRowsByKey(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	conn := genericPlans(t, s)
	type form struct {
		name      string
		run, gone bool
	}
	forms := []form{{"run", true, false}, {"steps", false, false}, {"run_gone", true, true}, {"steps_gone", false, true}}
	prepare := func(when string) {
		t.Helper()
		for _, f := range forms {
			types := "text, text"
			if f.gone {
				types += ", int8"
			}
			if _, err := conn.Exec(ctx, fmt.Sprintf("PREPARE leases_%s_%s(%s) AS %s", f.name, when, types, leasesRead(f.run, f.gone))); err != nil {
				t.Fatal(err)
			}
		}
	}
	prepare("empty")
	// A generic plan is made at its first execution: on empty tables.
	for _, f := range forms {
		args := "'x', 'x'"
		if f.gone {
			args += ", 3000"
		}
		if _, err := conn.Exec(ctx, fmt.Sprintf("EXPLAIN EXECUTE leases_%s_empty(%s)", f.name, args)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		if err := s.Create(ctx, storetest.NewSession(fmt.Sprintf("s%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO leases (tenant, session_id, agent_id, owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released)
		SELECT $1, s.id, CASE a WHEN 0 THEN '' ELSE 'agent_' || a END, md5(s.id), 'host-a', 100, 1, 1, now(), now(), now() + interval '1 minute', false
		FROM sessions s, generate_series(0, 4) a WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at)
		SELECT $1, s.id, 'step:agent_' || a, md5(s.id || a), now() + interval '1 minute'
		FROM sessions s, generate_series(1, 4) a WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for _, f := range forms {
			args := fmt.Sprintf("'%s', 's150'", s.tenant)
			if f.gone {
				args += ", 3000"
			}
			text := explained(t, conn, fmt.Sprintf("EXPLAIN EXECUTE leases_%s_%s(%s)", f.name, when, args))
			for _, table := range []string{"sessions", "leases", "locks"} {
				if strings.Contains(text, "Seq Scan on "+table) {
					t.Errorf("the leases' read (%s), planned %s, scans %s whole:\n%s", f.name, when, table, text)
				}
			}
		}
	}
	check("empty")
	if _, err := s.db.pool.Exec(ctx, `ANALYZE leases, locks, sessions`); err != nil {
		t.Fatal(err)
	}
	prepare("full")
	check("full")
}
