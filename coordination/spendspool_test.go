package coordination_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// spooled lists the spend spool's record files under a state directory.
func spooled(t *testing.T, state string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(state, "spend-pending", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestASpendAProcessLeftUnrecordedIsRecordedByTheNextOne: a spend waiting
// for the store is kept on disk; a service started on the same state
// directory (the process that waited died) records it from there, and the
// first process's own retry, once the store answers, finds it recorded:
// one usage entry, and the spool empty.
func TestASpendAProcessLeftUnrecordedIsRecordedByTheNextOne(t *testing.T) {
	state := t.TempDir()
	st := &outageStore{leasedStore: &leasedStore{Store: memstore.New()}, dir: state}
	st.downAtStart.Store(true)
	next := &coordtest.SyncBuffer{}
	var kept string
	_, s, agent, _ := stepCancelledInAnOutage(t, st, func(ctx context.Context, svc *coordination.Service, s *coordination.Session) {
		if n := svc.ReplaySpend(ctx); n != 0 {
			t.Fatalf("the process whose loop is recording the file took it up again (%d)", n)
		}
		files := spooled(t, state)
		if len(files) != 1 {
			t.Fatalf("spool files while the store is down: %v, want the step's spend", files)
		}
		data, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		kept = string(data)
		// The next process on this state directory, the store answering it.
		svc2 := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.New(next)})
		if n := svc2.ReplaySpend(ctx); n != 1 {
			t.Fatalf("the next service took up %d spool files, want 1; logs:\n%s", n, next.String())
		}
		if u := usageEntries(t, st, s.ID); len(u) != 1 {
			t.Fatalf("usage entries after the replay: %+v, want the step's spend", u)
		}
	})
	if !strings.Contains(kept, `"session":"`+s.ID+`"`) || !strings.Contains(kept, agent) {
		t.Errorf("the spool file does not say whose spend it is: %s", kept)
	}
	u := usageEntries(t, st, s.ID)
	if len(u) != 1 || u[0].Usage.Tokens() == 0 || u[0].Agents[0] != agent {
		t.Fatalf("usage entries %+v; want one, with the step's tokens, for %s (the replay and the first process's retry count it once)", u, agent)
	}
	if files := spooled(t, state); len(files) != 0 {
		t.Errorf("the spool still holds %v after the spend was recorded", files)
	}
	if !strings.Contains(next.String(), "recording a call's spend an earlier process left unrecorded") {
		t.Errorf("the replay did not say what it recorded:\n%s", next.String())
	}
}

// TestASpendRecordedAtOnceIsNeverKeptOnDisk: the spool is for spend an
// outage holds up; a cancelled call's spend that the store takes at once
// writes no file.
func TestASpendRecordedAtOnceIsNeverKeptOnDisk(t *testing.T) {
	state := t.TempDir()
	st := &outageStore{leasedStore: &leasedStore{Store: memstore.New()}, dir: state}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.AgentIDs()[0]})
	if _, err := os.Stat(filepath.Join(state, "spend-pending")); !os.IsNotExist(err) {
		t.Errorf("the spool directory exists (%v) though nothing waited for the store: %v", err, spooled(t, state))
	}
}

// TestASpoolFileThatIsNoRecordIsLeftAndTheRestRecorded: a file in the
// spool that does not read as a spend record is logged and left for an
// operator; the records beside it are recorded.
func TestASpoolFileThatIsNoRecordIsLeftAndTheRestRecorded(t *testing.T) {
	state := t.TempDir()
	st := &outageStore{leasedStore: &leasedStore{Store: memstore.New()}, dir: state}
	logs := &coordtest.SyncBuffer{}
	svc, s := leasedTeam(t, st, logs)
	dir := filepath.Join(state, "spend-pending")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	agent := s.AgentIDs()[0]
	record := `{"session":"` + s.ID + `","entry":{"seq":0,"kind":"usage","timestamp":"2026-12-03T10:00:00.123Z","agents":["` + agent +
		`"],"reason":"cancelled call of step 1","usage":{"input":120,"output":30}}}`
	for name, body := range map[string]string{"a.json": record, "torn.json": `{"session":"` + s.ID, "other.json": `{"session":"` + s.ID + `","entry":{"kind":"finished"}}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n := svc.ReplaySpend(context.Background()); n != 1 {
		t.Fatalf("took up %d files, want the one record; logs:\n%s", n, logs.String())
	}
	u := usageEntries(t, st, s.ID)
	if len(u) != 1 || u[0].Usage.Tokens() != 150 || u[0].Agents[0] != agent {
		t.Fatalf("usage entries %+v, want the record's 150 tokens for %s", u, agent)
	}
	left := spooled(t, state)
	if len(left) != 2 || !strings.Contains(strings.Join(left, " "), "torn.json") || !strings.Contains(strings.Join(left, " "), "other.json") {
		t.Errorf("the spool holds %v, want the two files that are no record, left as they were", left)
	}
	if c := strings.Count(logs.String(), "is not a spend record; left as it is"); c != 2 {
		t.Errorf("%d files logged as no record, want 2:\n%s", c, logs.String())
	}
	// Replayed again (the next start), the recorded one is gone and
	// nothing is counted twice.
	svc.ReplaySpend(context.Background())
	if u := usageEntries(t, st, s.ID); len(u) != 1 {
		t.Errorf("usage entries after a second replay: %+v", u)
	}
}

// TestASpendAnOutageHoldsUpCountsInTheBudget: while a given-up step's
// spend waits for the store, the session's token budget counts it: a
// session it puts past its budget stops by budget, not after the store
// answers (a resumed run would otherwise spend past the budget meanwhile).
func TestASpendAnOutageHoldsUpCountsInTheBudget(t *testing.T) {
	budget := int64(100_000)
	st := &outageStore{leasedStore: &leasedStore{Store: memstore.New()}, rules: coordination.Rules{TokenBudget: &budget}}
	st.downAtStart.Store(true)
	stepCancelledInAnOutage(t, st, func(ctx context.Context, svc *coordination.Service, s *coordination.Session) {
		if u := usageEntries(t, st, s.ID); len(u) != 0 {
			t.Fatalf("usage entries %+v while the store is down: the test would not test the held spend", u)
		}
		// Earlier spend one token short of the budget: only the held
		// spend takes the session past it.
		if _, err := st.AppendSession(ctx, s.ID, coordination.SessionEntry{Kind: coordination.SessionUsage, Time: time.Now(),
			Agents: []string{s.AgentIDs()[1]}, Reason: "earlier spend", Usage: &providers.Usage{Input: budget - 1}}); err != nil {
			t.Fatal(err)
		}
		v, err := svc.Status(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Result == nil || v.Result.StopReason == nil || *v.Result.StopReason != coordination.StopBudget {
			t.Fatalf("the session over its budget by the spend held for it reads %+v, want stopped by budget", v.Result)
		}
	})
}
