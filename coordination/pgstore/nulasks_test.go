package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// schemaBelow is a schema of its own (its DSN, and a connection to it
// closed with the test) where the migrations before version below are
// applied, as a database an earlier massgen-mcp left: rows a test stores
// there then are what that version wrote, and Open migrates them.
func schemaBelow(t *testing.T, below int) (string, *pgx.Conn) {
	t.Helper()
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version >= below {
			break
		}
		if _, err := conn.Exec(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	return dsn, conn
}

// TestAsksStoredWithANulBeforeMigration24AreRead: before an ask's texts
// had their NULs replaced (noNul), a command a model wrote with a NUL was
// stored as JSON holding the escape \u0000, which PostgreSQL's JSON
// operators cannot decode: every read of the session's asks (their lapse is
// request->>'expires', a standing answer's author response->>'by') failed
// with "unsupported Unicode escape sequence" (SQLSTATE 22P05), on every
// replica, for as long as the row lived. Once migrated, those rows read as
// new ones would: each NUL shown as U+FFFD, a backslash written out before
// "u0000" kept as written.
func TestAsksStoredWithANulBeforeMigration24AreRead(t *testing.T) {
	dsn, conn := schemaBelow(t, 24)
	ctx := context.Background()
	setup, err := json.Marshal(storetest.NewSession("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO sessions (tenant, id, created_at, setup) VALUES ('default', 's1', now(), $1)`, setup); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	ask := func(id, tool, target string, expires time.Time) permissions.ApprovalRequest {
		return permissions.ApprovalRequest{ID: id, Session: "s1", Agent: "agent_a", Tool: tool, Rule: "ask exec(*)",
			Action: permissions.Action{Kind: permissions.Exec, Target: target}, Asked: now.Add(-time.Minute), Expires: expires}
	}
	asks := []permissions.ApprovalRequest{
		ask("r1", "run\x00command", "printf 'a\x00b'", now.Add(time.Hour)),
		// A backslash before a NUL, then a backslash written out before
		// "u0000": JSON `dir\\\u0000 and echo \\u0000`.
		ask("r2", "Bash", "dir\\\x00 and echo \\u0000", now.Add(time.Hour)),
		ask("r3", "Bash", "rm -rf /tmp/x\x00", now.Add(time.Hour)),
		ask("r4", "Bash", "sleep 1\x00", now.Add(-time.Hour)), // its asker is gone
	}
	for i, q := range asks {
		data, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO approval_requests (tenant, session_id, id, asked_at, request) VALUES ('default', 's1', $1, $2, $3)`,
			q.ID, q.Asked.Add(time.Duration(i)*time.Millisecond), data); err != nil {
			t.Fatal(err)
		}
	}
	no, err := json.Marshal(permissions.ApprovalResponse{ID: "r3", By: "ops\x00", Reason: "not \x00 that", At: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO approval_responses (tenant, session_id, id, at, approve, response) VALUES ('default', 's1', 'r3', $1, false, $2)`, now, no); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cs, err := db.For("default")
	if err != nil {
		t.Fatal(err)
	}
	st := cs.(*Store)
	pending, err := st.PendingApprovals(ctx, "s1")
	if err != nil {
		t.Fatalf("reading the session's pending asks: %v", err)
	}
	if len(pending) != 2 || pending[0].ID != "r1" || pending[1].ID != "r2" {
		t.Fatalf("pending asks = %+v, want r1 and r2", pending)
	}
	if got := pending[0]; got.Tool != "run\uFFFDcommand" || got.Action.Target != "printf 'a\uFFFDb'" {
		t.Errorf("r1 reads back as tool %q, command %q; want its NULs shown as U+FFFD", got.Tool, got.Action.Target)
	}
	if got := pending[1].Action.Target; got != "dir\\\uFFFD and echo \\u0000" {
		t.Errorf("r2's command reads back as %q; want the NUL after the backslash shown as U+FFFD and the written-out \\u0000 kept", got)
	}
	answer, found, err := st.ApprovalAnswer(ctx, "s1", "r3")
	if err != nil || !found || answer.By != "ops\uFFFD" || answer.Reason != "not \uFFFD that" {
		t.Errorf("r3's answer reads back as %+v, %v, %v; want by ops, its reason's NUL shown as U+FFFD", answer, found, err)
	}
	if err := st.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: "r3", Approve: true, By: "ops", At: now}); !errors.Is(err, permissions.ErrAnswered) {
		t.Errorf("answering r3 again = %v, want ErrAnswered", err)
	}
	if err := st.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: "r1", Approve: true, By: "ops", At: now}); err != nil {
		t.Errorf("approving r1: %v", err)
	}
	expired, err := st.ExpireApprovals(ctx, "s1", func(r permissions.ApprovalRequest) permissions.Record {
		return permissions.Record{Time: now, Agent: r.Agent, Outcome: permissions.Refused, Request: r.ID}
	})
	if err != nil || len(expired) != 1 || expired[0].ID != "r4" || expired[0].Action.Target != "sleep 1\uFFFD" {
		t.Errorf("refusing the lapsed asks = %+v, %v; want r4, its NUL shown as U+FFFD", expired, err)
	}
}
