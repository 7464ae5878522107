package filestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// sessionFiles are the files of a session every reader reads, relative to
// its directory.
var sessionFiles = []string{
	"session.json",
	"agents/agent_a/001/answer.json",
	"agents/agent_b/001/answer.json",
	"agents/agent_a/002/vote.json",
	"agents/agent_b/002/error.json",
	"session_log/001.json",
	"agents/agent_a/last_action.json",
	"agents/agent_a/host_view.json",
	"status.json",
	"final/result.json",
	"events.jsonl",
	"eval_criteria.json",
}

// FuzzSessionFiles writes arbitrary bytes over one file of a session and
// reads the session with every reader. None may panic; a ledger that does not
// read fails with ErrDamaged naming the file, and fsck's Check reports the
// same file; Tidy never touches a ledger file.
func FuzzSessionFiles(f *testing.F) {
	for i := range sessionFiles {
		f.Add(uint8(i), []byte(`{"agent_id": "agent_a", "answer": "4`))
		f.Add(uint8(i), []byte(`{}`))
	}
	f.Add(uint8(3), []byte(`{"voter": "agent_a", "target": "agent_b", "seen_steps": {"agent_b": 1}, "timestamp": "2026-03-20T22:40:00Z"}`))
	f.Add(uint8(5), []byte(`{"seq": 1, "kind": "finished", "result": {"status": "finished"}}`))
	f.Add(uint8(10), []byte("{\"type\": \"x\"}\n{\"ty"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		ctx := context.Background()
		state := t.TempDir()
		st := filestore.New(state)
		sess := &coordination.Session{ID: "team_fuzz", Task: "t", Agents: []coordination.Agent{{ID: "agent_a", Model: "sim"}, {ID: "agent_b", Model: "sim"}}, Aliases: map[string]int{"agent_a": 1, "agent_b": 2}}
		if err := st.Create(ctx, sess); err != nil {
			t.Fatal(err)
		}
		appendEntry(t, st, "agent_a", coordination.Entry{Kind: coordination.KindAnswer, Content: "4"})
		appendEntry(t, st, "agent_b", coordination.Entry{Kind: coordination.KindAnswer, Content: "5"})
		appendEntry(t, st, "agent_a", coordination.Entry{Kind: coordination.KindVote, Target: "agent_b", SeenSteps: map[string]int{"agent_a": 1, "agent_b": 1}})
		appendEntry(t, st, "agent_b", coordination.Entry{Kind: coordination.KindError, Message: "boom"})
		if _, err := st.AppendSession(ctx, "team_fuzz", coordination.SessionEntry{Kind: coordination.SessionCancelled}); err != nil {
			t.Fatal(err)
		}
		dir := st.Dir("team_fuzz")
		rel := sessionFiles[int(which)%len(sessionFiles)]
		path := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fresh := filestore.New(state)
		_, _ = fresh.Session(ctx, "team_fuzz")
		_, _ = fresh.Events(ctx, "team_fuzz")
		_, _ = fresh.View(ctx, "team_fuzz", "agent_a")
		_, _ = fresh.Sessions(ctx)
		_, lerr := fresh.Ledger(ctx, "team_fuzz")
		if lerr != nil && !errors.Is(lerr, coordination.ErrDamaged) {
			t.Fatalf("Ledger error is not ErrDamaged: %v", lerr)
		}
		if lerr != nil && !strings.Contains(lerr.Error(), dir) {
			t.Fatalf("Ledger damage does not name a path: %v", lerr)
		}
		problems, err := fresh.Check(ctx, "team_fuzz")
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		if lerr != nil {
			found := false
			for _, p := range problems {
				found = found || (p.Kind == filestore.ProblemDamaged && strings.Contains(lerr.Error(), p.Path))
			}
			if !found {
				t.Fatalf("Ledger fails (%v) but Check reports no damage there: %+v", lerr, problems)
			}
		}
		before, _ := os.ReadFile(path)
		if _, err := fresh.Tidy(ctx, "team_fuzz"); err != nil {
			t.Fatalf("Tidy: %v", err)
		}
		isLedger := strings.Contains(rel, "/00") || rel == "session.json"
		if after, err := os.ReadFile(path); isLedger && (err != nil || string(after) != string(before)) {
			t.Fatalf("Tidy changed the ledger file %s", rel)
		}
	})
}

func appendEntry(t *testing.T, st *filestore.Store, agent string, e coordination.Entry) {
	t.Helper()
	l, err := st.LockStep(context.Background(), "team_fuzz", agent)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := l.Append(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}
