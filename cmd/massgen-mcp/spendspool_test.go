package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestRunRecordsTheSpendAnEarlierProcessLeftUnrecorded: a spend an earlier
// process kept in the state directory's spool, the store unreachable when
// it ended, is recorded into its session by the next `run` there.
func TestRunRecordsTheSpendAnEarlierProcessLeftUnrecorded(t *testing.T) {
	dir := t.TempDir()
	out, code := cli(t, "run", "--json", "--state-dir", dir, "--models", "sim/strong,sim/strong", "--seed", "1", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var res coordination.TeamResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	id := res.SessionID
	before := usageOf(t, dir, id)
	spool := filepath.Join(dir, "spend-pending")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	record := `{"session":"` + id + `","entry":{"kind":"usage","timestamp":"2026-12-03T10:00:00.123Z","agents":["agent_a"],` +
		`"reason":"step 3, given up with its run while the store was unreachable","usage":{"input":700,"output":77}}}`
	if err := os.WriteFile(filepath.Join(spool, id+"-0001.json"), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := cli(t, "run", "--state-dir", dir, "--models", "sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for usageOf(t, dir, id) != before+777 {
		if time.Now().After(deadline) {
			t.Fatalf("the session's usage entries count %d tokens, want %d before and the spooled 777", usageOf(t, dir, id), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		if left, _ := filepath.Glob(filepath.Join(spool, "*.json")); len(left) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("the spool file is still there after its spend was recorded")
}

// usageOf sums the tokens of a session's usage entries.
func usageOf(t *testing.T, dir, id string) int64 {
	t.Helper()
	l, err := newService(dir, 1).Store().Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range l.Session {
		if e.Kind == coordination.SessionUsage && e.Usage != nil {
			n += e.Usage.Tokens()
		}
	}
	return n
}
