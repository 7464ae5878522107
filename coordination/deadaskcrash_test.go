package coordination_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestALapsedAskRefusedByAReaderKilledBeforeItsRecordIsStillRecorded: a
// reader of the file store refuses an ask whose asker died
// (permissions.Expire) and then records the refusal in the session's
// permission log. A reader killed between the two leaves the refusal
// written and the log without it; the ask is answered, so no later expiry
// returns it. The next reader must still record it, once: the log is the
// user's record of what was refused.
func TestALapsedAskRefusedByAReaderKilledBeforeItsRecordIsStillRecorded(t *testing.T) {
	state := t.TempDir()
	killed := askService(state, nil)
	s := stepSession(t, killed)
	dead := deadAsk(s.ID)
	dir := coordination.DirOf(killed.Store(), s.ID)
	writeRequest(t, dir, dead)
	expireThenDie(t, dir)

	next := askService(state, nil)
	ctx := context.Background()
	if pending, _ := next.PendingApprovals(ctx, s.ID); len(pending) != 0 {
		t.Errorf("%d asks pending, the first %s: want none", len(pending), pending[0].ID)
	}
	checkDeadAskRefused(t, next, s.ID, dead)
	if c, err := next.CountPermissions(ctx, s.ID); err != nil || c.Refused != 1 {
		t.Errorf("the counts are %v (%v); want the dead ask's one refusal", c, err)
	}
}

// TestTwoReadersExpiringAnAskAtOnceRecordItOnce: readers in several
// processes (services on one state directory) that find the same lapsed
// ask at once refuse it once and record it once.
func TestTwoReadersExpiringAnAskAtOnceRecordItOnce(t *testing.T) {
	state := t.TempDir()
	first := askService(state, nil)
	s := stepSession(t, first)
	dead := deadAsk(s.ID)
	writeRequest(t, coordination.DirOf(first.Store(), s.ID), dead)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		svc := askService(state, nil)
		wg.Go(func() { _, _ = svc.PendingApprovals(ctx, s.ID) })
	}
	wg.Wait()
	checkDeadAskRefused(t, askService(state, nil), s.ID, dead)
}

// expireThenDie is what a reader killed after refusing dir's lapsed asks
// and before recording them leaves behind.
func expireThenDie(t *testing.T, dir string) {
	t.Helper()
	got, err := permissions.Expire(dir, time.Now().Add(-coordination.MaxClockSkew))
	if err != nil || len(got) != 1 {
		t.Fatalf("the expiry refused %+v (%v); want the dead ask", got, err)
	}
}
