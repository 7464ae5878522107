package coordination_test

import (
	"context"
	"errors"
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
// returns it. The next reader must still record it, and once: also when
// the reader was killed just after its record landed.
func TestALapsedAskRefusedByAReaderKilledBeforeItsRecordIsStillRecorded(t *testing.T) {
	for _, recorded := range []bool{false, true} {
		state := t.TempDir()
		killed := askService(state, nil)
		s := stepSession(t, killed)
		dead := deadAsk(s.ID)
		dir := coordination.DirOf(killed.Store(), s.ID)
		writeRequest(t, dir, dead)
		ctx := context.Background()
		expireThenDie(t, dir, coordination.RecordAskerGone(killed, ctx, s.ID), recorded)

		next := askService(state, nil)
		if pending, _ := next.PendingApprovals(ctx, s.ID); len(pending) != 0 {
			t.Errorf("%d asks pending, the first %s: want none", len(pending), pending[0].ID)
		}
		checkDeadAskRefused(t, next, s.ID, dead)
		if c, err := next.CountPermissions(ctx, s.ID); err != nil || c.Refused != 1 {
			t.Errorf("killed after its record %v: the counts are %v (%v); want the dead ask's one refusal", recorded, c, err)
		}
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

// expireThenDie is what a reader killed while it recorded the refusal of
// dir's lapsed ask leaves behind: its process ends inside the record,
// before its record lands, or (recorded) just after.
func expireThenDie(t *testing.T, dir string, record func(permissions.ApprovalRequest, bool) error, recorded bool) {
	t.Helper()
	died := false
	func() {
		defer func() { died = recover() == errKilled }()
		_, _ = permissions.Expire(dir, time.Now().Add(-coordination.MaxClockSkew), func(r permissions.ApprovalRequest, again bool) error {
			if recorded {
				if err := record(r, again); err != nil {
					t.Fatal(err)
				}
			}
			panic(errKilled)
		})
	}()
	if !died {
		t.Fatal("the expiry never came to record the dead ask's refusal, so nothing was killed, which tests nothing")
	}
}

var errKilled = errors.New("killed")
