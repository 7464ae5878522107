package coordination_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAFinalizeThatTakesUpADeadRunSaysSo: a session whose run died on
// another replica (its lease unreleased and expired) is finalized here. The
// timeline says the session was taken up and whose run died (by its lease's
// id, not its process and host), as a run's
// resume does; before, it went from the dead run's steps to the finish with
// nothing between.
func TestAFinalizeThatTakesUpADeadRunSaysSo(t *testing.T) {
	st := memstore.New()
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(),
		RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireRun(ctx, s.ID, coordination.LeaseOwner{ID: "dead-replica", Host: "elsewhere", PID: 4242}, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20*time.Millisecond + coordination.MaxClockSkew + 50*time.Millisecond) // another host's lease: its expiry and the skew
	if v, err := svc.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Fatalf("before the finalize: %v (%v), want interrupted", v.Result.Status, err)
	}
	res, err := svc.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if res.Status == coordination.StatusInterrupted || res.Status == coordination.StatusRunning {
		t.Fatalf("finalize ended %s, want the session ended", res.Status)
	}
	events, err := svc.Events(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Type == "resumed" {
			// The dead run by its lease's id: its process and host are
			// the server's, for the log, not for whoever reads the session.
			if !strings.Contains(e.Message, "finalized") || !strings.Contains(e.Message, "dead-replica") || strings.Contains(e.Message, "4242") || strings.Contains(e.Message, "elsewhere") {
				t.Fatalf("the takeover event says %q; want that it was taken up to be finalized, from dead-replica, without its pid and host", e.Message)
			}
			return
		}
	}
	t.Fatalf("no resumed event after a finalize took up a dead run; events: %+v", events)
}
