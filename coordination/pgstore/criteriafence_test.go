package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// TestAStaleLockHoldersCriteriaAreRefusedOnceAnAgentStepped: the session
// lock is an expiring row, and the heartbeat puts back a row it finds
// missing. A replica whose lock lapsed (a stall longer than lockTTL)
// between AttachCriteria's "no step yet" check and SetCriteria, while
// another replica took the lock, started a step and landed it, must not
// change the prompt that step was made with: SetCriteria checks the rule
// itself, with the step in flight and once it landed.
func TestAStaleLockHoldersCriteriaAreRefusedOnceAnAgentStepped(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	const id = "rt-criteria"
	if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	unlockA, err := a.LockSession(ctx, id) // A: attachable() read here: no step yet
	if err != nil {
		t.Fatal(err)
	}
	defer unlockA()
	// A stalls past lockTTL: its row lapses (as missed heartbeats make it).
	if _, err := a.db.pool.Exec(ctx, `UPDATE locks SET expires_at = now() - interval '1 second' WHERE tenant = $1 AND session_id = $2 AND name = 'session'`, a.tenant, id); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	unlockB, err := b.LockSession(sctx, id)
	if err != nil {
		t.Fatalf("B could not take the lapsed session lock: %v", err)
	}
	l, err := b.LockStep(ctx, id, "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	items := []criteria.Item{{ID: "X1", Text: "changed after the first step", Category: "must"}}
	if err := a.SetCriteria(ctx, id, items); !errors.Is(err, coordination.ErrSessionStarted) {
		t.Errorf("criteria set while another replica's step is in flight: %v", err)
	}
	if _, err := l.(*stepLock).AppendUncancelled(ctx, newAnswer("agent_a", "391"), 0); err != nil {
		t.Fatal(err)
	}
	l.Release()
	unlockB()
	// A's heartbeat puts A's row back: A "holds" the lock again.
	deadline := time.Now().Add(3 * lockBeat)
	for {
		var tok string
		err := a.db.pool.QueryRow(ctx, `SELECT token FROM locks WHERE tenant = $1 AND session_id = $2 AND name = 'session'`, a.tenant, id).Scan(&tok)
		if err == nil {
			t.Logf("A's session lock row is back after B took it over and let it go (token %s)", tok)
			break
		}
		if time.Now().After(deadline) {
			t.Log("A's row was not put back")
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A goes on with its attach: the store refuses it.
	if err := a.SetCriteria(ctx, id, items); !errors.Is(err, coordination.ErrSessionStarted) {
		t.Errorf("a stale session-lock holder rewrote the criteria after agent_a's step landed: %v", err)
	}
	if s, err := b.Session(ctx, id); err != nil || len(s.Criteria) != 0 && s.Criteria[0].ID == "X1" {
		t.Errorf("the stored criteria changed: %v, %v", s, err)
	}
}
