package filestore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestReaderDuringAFinishSeesNoDamage lands a run's finished entry and its
// final/result.json between a reader's listing of the session log and its
// check against final/, the window a loaded machine hit: the reader must
// take the session as it was when it listed (not finished yet), and a
// finished entry really removed must still read as damage.
func TestReaderDuringAFinishSeesNoDamage(t *testing.T) {
	ctx := context.Background()
	s := New(t.TempDir())
	if err := s.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionRevote, Reason: "split"}); err != nil {
		t.Fatal(err)
	}
	answer := "391"
	finished := coordination.SessionEntry{Kind: coordination.SessionFinished,
		Result: &coordination.TeamResult{Status: coordination.StatusFinished, FinalAnswer: &answer}}

	landed := false
	afterSessionLogRead = func(string) {
		if landed {
			return
		}
		landed = true
		if _, err := s.AppendSession(ctx, "s", finished); err != nil {
			t.Errorf("finishing the run in the reader's window: %v", err)
		}
	}
	defer func() { afterSessionLogRead = func(string) {} }()

	l, err := s.Ledger(ctx, "s")
	if !landed {
		t.Fatal("the reader never reached the window between its listing and its check")
	}
	if err != nil {
		t.Fatalf("a reader overlapping a finish reported damage: %v", err)
	}
	if n := len(l.Session); n != 1 {
		t.Errorf("the reader listed before the finish, so it should see 1 entry, got %d", n)
	}
	l, err = s.Ledger(ctx, "s")
	if err != nil {
		t.Fatalf("reading the finished session: %v", err)
	}
	if n := len(l.Session); n != 2 || l.Session[1].Kind != coordination.SessionFinished {
		t.Errorf("the next reader should see the finished entry, got %+v", l.Session)
	}

	// Real damage: the finished entry gone while final/result.json stays.
	if err := os.Remove(filepath.Join(s.Dir("s"), "session_log", stepName(2)+".json")); err != nil {
		t.Fatal(err)
	}
	_, err = s.Ledger(ctx, "s")
	if err == nil || !strings.Contains(err.Error(), "no finished entry") {
		t.Fatalf("a removed finished entry should read as damage, got %v", err)
	}
}
