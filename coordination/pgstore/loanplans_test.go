package pgstore

import (
	"context"
	"crypto/md5"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestBatchedStatementsLookUpTheirRowsByKey: the loans' batch read finds
// each ask's rows by its table's key, a group of events each event's
// session, and the gathered lease renewals each lease, whatever the
// planner knew of the tables when it planned. A statement pgx prepared early (the tables nearly
// empty) keeps its generic plan for as long as its connection lives, and
// nothing changes it before the tables are analysed (CI runs without
// autovacuum): as plain joins the reads kept a hash join over a scan of
// the whole table, at 1,000 sessions 10,910 entries scanned at every
// batch, 4.6 ms a read. Here each read is planned on empty tables, as a
// replica's first loans plan it, and explained once they hold thousands
// of rows.
func TestBatchedStatementsLookUpTheirRowsByKey(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	conn := genericPlans(t, s)
	reads := []struct {
		name, sql, types string
		args             []any
	}{
		{"sessions", loanSessionsRead, "text[], text[], bool[], bool[]", nil},
		{"entries", loanEntriesRead, "text[], text[], int8[], text[], int[], bool[]", nil},
		{"session entries", loanLogRead, "text[], text[], int[]", nil},
		{"events' sessions", eventsInsert, "text[], text[], timestamptz[], text[], text", nil},
		{"renewals' leases", renewalLeasesRead, "text[], text[], text[]", nil},
		{"renewals' sessions", renewalSessionsRead, "text[], text[], text[]", nil},
	}
	for i, r := range reads {
		if _, err := conn.Exec(ctx, fmt.Sprintf("PREPARE loan%d(%s) AS %s", i, r.types, r.sql)); err != nil {
			t.Fatalf("preparing the %s read: %v", r.name, err)
		}
		// Planned now, on empty tables, and kept.
		empty := strings.TrimSuffix(strings.Repeat("'{}', ", strings.Count(r.types, ",")+1), ", ")
		if _, err := conn.Exec(ctx, fmt.Sprintf("EXPLAIN EXECUTE loan%d(%s)", i, empty)); err != nil {
			t.Fatalf("planning the %s read: %v", r.name, err)
		}
	}
	const sessions = 300
	var ids []string
	for i := range sessions {
		id := fmt.Sprintf("s%03d", i)
		if err := s.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO entries (tenant, session_id, agent_id, step, kind, at, entry)
		SELECT $1, s.id, 'agent_' || a, n, 'answer', now(), '{}'
		FROM sessions s, generate_series(1, 4) a, generate_series(1, 5) n WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO session_log (tenant, session_id, seq, kind, at, entry)
		SELECT $1, s.id, n, 'created', now(), '{}' FROM sessions s, generate_series(2, 6) n WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO leases (tenant, session_id, agent_id, owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released)
		SELECT $1, s.id, 'agent_' || a, 'o', 'h', 1, 1, 1, now(), now(), now(), false FROM sessions s, generate_series(1, 4) a WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO spend_holds (tenant, session_id, holder, cost_usd, tokens, expires_at)
		SELECT $1, s.id, 'hold:' || h, 0.1, 100, now() + interval '1 hour' FROM sessions s, generate_series(1, 2) h WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	// Three asks, as a batch of loans makes them: two keep a ledger, one
	// reads its session for the first time. (EXPLAIN EXECUTE takes no
	// bound parameters: the values are written out.)
	ts := fmt.Sprintf("'{%[1]s,%[1]s,%[1]s}'", s.tenant)
	asked := fmt.Sprintf("'{%s,%s,%s}'", ids[7], ids[150], ids[299])
	reads[0].args = []any{ts, asked, "'{f,f,t}'", "'{t,t,t}'"}
	reads[1].args = []any{ts, asked, "'{1,1,2,2}'", "'{agent_1,agent_2,agent_1,agent_2}'", "'{3,3,4,4}'", "'{f,f,t}'"}
	reads[2].args = []any{ts, asked, "'{4,5,0}'"}
	const at = `"2026-12-05 00:00:00+00"`
	reads[3].args = []any{ts, asked, "'{" + at + "," + at + "," + at + "}'", `'{"{}","{}","{}"}'`, "'unheard'"}
	reads[4].args = []any{ts, asked, "'{agent_1,agent_2,agent_1}'"}
	reads[5].args = reads[4].args
	for i, r := range reads {
		var params []string
		for _, a := range r.args {
			params = append(params, a.(string))
		}
		text := explained(t, conn, fmt.Sprintf("EXPLAIN EXECUTE loan%d(%s)", i, strings.Join(params, ", ")))
		for _, table := range []string{"sessions", "entries", "session_log", "leases", "event_counters", "spend_holds"} {
			if strings.Contains(text, "Seq Scan on "+table) {
				t.Errorf("the %s statement scans %s whole:\n%s", r.name, table, text)
			}
		}
	}
}

// TestARenewalLooksUpItsRowsByKey: the heartbeat's renewal of a part of
// the held rows finds each by its key, in the plan kept from when the
// table was empty, not by scanning the tenant's thousands of rows.
func TestARenewalLooksUpItsRowsByKey(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	conn := genericPlans(t, s)
	if _, err := conn.Exec(ctx, "PREPARE renew(text, text[], text[], text[], int8) AS "+lockRenew); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `BEGIN; EXPLAIN EXECUTE renew('x', '{}', '{}', '{}', 1); ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if err := s.Create(ctx, storetest.NewSession(fmt.Sprintf("s%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at)
		SELECT $1, s.id, 'step:agent_' || a, md5(s.id || a), now() FROM sessions s, generate_series(1, 4) a WHERE s.tenant = $1`, s.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	if text := explained(t, conn, fmt.Sprintf(`EXPLAIN EXECUTE renew('%s', '{s007,s300}', '{step:agent_1,step:agent_2}', '{%x,%x}', 10000)`,
		s.tenant, md5hex("s0071"), md5hex("s3002"))); strings.Contains(text, "Seq Scan on locks") || !strings.Contains(text, "session_id = u.s") {
		t.Errorf("a renewal scans the tenant's locks instead of looking its rows up by key:\n%s", text)
	}
}

func md5hex(s string) [16]byte { return md5.Sum([]byte(s)) }

// TestRenewalPartsCoverEveryRowOnce: the heartbeat's parts hold every held
// row once, none more than renewPart.
func TestRenewalPartsCoverEveryRowOnce(t *testing.T) {
	for _, n := range []int{0, 1, renewPart, renewPart + 1, 3*renewPart + 7} {
		rows := map[string]heldRow{}
		for i := range n {
			rows[fmt.Sprint("tok", i)] = heldRow{session: fmt.Sprint("s", i), name: "step:agent_a"}
		}
		seen := map[string]int{}
		parts := 0
		for part := range renewParts(rows) {
			parts++
			if len(part) == 0 || len(part) > renewPart {
				t.Errorf("%d rows: a part of %d rows, want 1 to %d", n, len(part), renewPart)
			}
			for tok, r := range part {
				seen[tok]++
				if r != rows[tok] {
					t.Errorf("%d rows: %s's row %+v, want %+v", n, tok, r, rows[tok])
				}
			}
		}
		if want := (n + renewPart - 1) / renewPart; parts != want || len(seen) != n {
			t.Errorf("%d rows: %d parts covering %d rows, want %d parts covering all", n, parts, len(seen), want)
		}
		for tok, k := range seen {
			if k != 1 {
				t.Errorf("%d rows: %s in %d parts", n, tok, k)
			}
		}
	}
}

// genericPlans is a connection of s's pool that plans every prepared
// statement generically, as PostgreSQL does after a statement's first
// executions, so a plan made on empty tables is the one kept; it goes back
// to the pool as it was at the test's end.
func genericPlans(t *testing.T, s *Store) *pgxpool.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := s.db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = conn.Exec(ctx, `ROLLBACK; DEALLOCATE ALL; RESET plan_cache_mode`)
		conn.Release()
	})
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// explained is the plan EXPLAIN q prints, line by line.
func explained(t *testing.T, conn *pgxpool.Conn, q string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(plan, "\n")
}
