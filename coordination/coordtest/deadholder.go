package coordtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// DeadHolderReadsInterrupted plays the other half of "a run's state is
// always true" (docs/DESIGN.md, "Runs have owners") over st, a store with
// run leases: a session whose run's process died (SIGKILL, on another host,
// so only its lease's expiry can tell) reads running while the lease may
// still be renewed, and interrupted — never running for ever — once it has
// expired, in Status (status, team_status), Inspect and the session list.
// The service's clock is moved past the expiry rather than waited out.
func DeadHolderReadsInterrupted(t *testing.T, st coordination.Store) {
	ls, ok := st.(coordination.LeaseStore)
	if !ok {
		t.Fatalf("%T keeps no run leases", st)
	}
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	models, _, provs := Team(t, 2)
	h := &Harness{T: t, Providers: provs}
	svc := coordination.NewService(st, coordination.Options{Open: h.Open, Now: clock})
	s := create(t, svc, models)
	dead := coordination.LeaseOwner{ID: "killed", Host: "another-host.invalid", PID: 4242}
	if _, err := ls.AcquireRun(ctx, s.ID, dead, coordination.DefaultLeaseTTL); err != nil {
		t.Fatal(err)
	}
	l, err := ls.ReadRun(ctx, s.ID) // as stored: a database keeps microseconds
	if err != nil || l == nil {
		t.Fatalf("the dead run's lease: %v, %v", l, err)
	}

	if v, err := svc.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusRunning {
		t.Fatalf("within its lease the run reads %v (%v), want running", statusOf(v), err)
	}
	mu.Lock()
	now = l.Expires.Add(coordination.MaxClockSkew + time.Second)
	mu.Unlock()
	for name, read := range map[string]func(context.Context, string) (*coordination.StatusView, error){"Status": svc.Status, "Inspect": svc.Inspect} {
		v, err := read(ctx, s.ID)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Result.Status != coordination.StatusInterrupted || v.Result.LastAlive == nil || !v.Result.LastAlive.Equal(l.Renewed) {
			t.Errorf("%s past the lease's expiry: %s, last alive %v; want interrupted, last alive %v", name, v.Result.Status, v.Result.LastAlive, l.Renewed)
		}
	}
	page, err := svc.ListSessions(ctx, coordination.SessionQuery{Status: coordination.StatusInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 1 || page.Sessions[0].SessionID != s.ID {
		t.Errorf("the interrupted sessions listed: %+v; want %s", page.Sessions, s.ID)
	}
}

func statusOf(v *coordination.StatusView) string {
	if v == nil || v.Result == nil {
		return "nothing"
	}
	return v.Result.Status
}
