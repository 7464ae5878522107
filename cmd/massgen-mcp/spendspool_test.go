package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// replicaStore is a memory store that says when it is unreachable and
// keeps a replica's state directory, as PostgreSQL's does: a store whose
// spend can wait in the spool.
type replicaStore struct {
	*memstore.Store
	state string
}

func (s *replicaStore) Unavailable(err error) bool {
	return errors.Is(err, coordination.ErrStoreUnavailable)
}
func (s *replicaStore) WorkDir(id string) string { return filepath.Join(s.state, "sessions", id) }
func (s *replicaStore) Snapshots(string) workspace.Remote {
	return nil
}

// TestServeRecordsTheSpendLeftInItsSpoolAtOnceAndLater: a served tenant's
// spend spool is recorded as its service opens, and a record that appears
// later (given up past its grace) by the next look.
func TestServeRecordsTheSpendLeftInItsSpoolAtOnceAndLater(t *testing.T) {
	st := &replicaStore{Store: memstore.New(), state: t.TempDir()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	spool := filepath.Join(st.state, "spend-pending")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	put := func(name string, tokens int) {
		record := `{"session":"` + s.ID + `","entry":{"kind":"usage","timestamp":"2026-12-03T10:00:0` + name[:1] + `.123Z","agents":["` + s.AgentIDs()[0] + `"],` +
			`"reason":"cancelled call of step 1","usage":{"input":` + fmt.Sprint(tokens) + `}}}`
		if err := os.WriteFile(filepath.Join(spool, name), []byte(record), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	usage := func() int64 {
		l, err := st.Ledger(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, e := range l.Session {
			if e.Kind == coordination.SessionUsage {
				n += e.Usage.Tokens()
			}
		}
		return n
	}
	waitFor := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for usage() != want {
			if time.Now().After(deadline) {
				t.Fatalf("usage entries count %d tokens, want %d", usage(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	put("1.json", 300)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); replaySpendEvery(ctx, svc, 50*time.Millisecond) }()
	waitFor(300)
	put("2.json", 40)
	waitFor(340)
	cancel()
	<-done
	if left, _ := filepath.Glob(filepath.Join(spool, "*.json")); len(left) != 0 {
		t.Errorf("the spool still holds %v", left)
	}
}
