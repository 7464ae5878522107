package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestALandingWaitsForACancelBeingRecordedBesideIt: the session lock is an
// unlogged row, and two replicas can hold it after a database crash or a
// missed expiry; a cancel recorded by the other one, not yet committed,
// then overlaps the landing's count of cancels. The landing's fence takes
// the session's row FOR SHARE (migration 7): it waits for the cancel's
// commit and is then refused, instead of counting without it and landing
// beside an acknowledged cancel. A server step's leased landing and a
// host's (AppendUncancelled) alike.
func TestALandingWaitsForACancelBeingRecordedBesideIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		land func(t *testing.T, a *Store) func() error
	}{
		{"a server step's leased landing", func(t *testing.T, a *Store) func() error {
			l, lease := leasedStep(t, a)
			return func() error {
				_, _, err := l.LandLeased(context.Background(), newAnswer("agent_a", "beside the cancel"), lease.Version, 0)
				return err
			}
		}},
		{"a host's landing", func(t *testing.T, a *Store) func() error {
			l, err := a.LockStep(context.Background(), "s", "agent_a")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(l.Release)
			return func() error {
				_, err := l.(coordination.UncancelledLanding).AppendUncancelled(context.Background(), newAnswer("agent_a", "beside the cancel"), 0)
				return err
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := replicaOn(t, pgtest.Schema(t), Options{})
			ctx := context.Background()
			if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
				t.Fatal(err)
			}
			land := tc.land(t, a)
			// The other holder's cancel, as AppendSession writes it, uncommitted.
			tx, err := a.db.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			var seq int
			if err := tx.QueryRow(ctx, `UPDATE sessions SET log_seq = log_seq + 1 WHERE tenant = $1 AND id = 's' RETURNING log_seq`, a.tenant).Scan(&seq); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO session_log (tenant, session_id, seq, kind, at, entry) VALUES ($1, 's', $2, 'cancelled', now(), '{"kind":"cancelled"}')`, a.tenant, seq); err != nil {
				t.Fatal(err)
			}
			landed := make(chan error, 1)
			go func() { landed <- land() }()
			select {
			case err := <-landed:
				t.Fatalf("the landing returned (%v) while a cancel was being recorded beside it; want it to wait for the cancel", err)
			case <-time.After(300 * time.Millisecond):
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-landed:
				if !errors.Is(err, coordination.ErrNotNext) || errors.Is(err, coordination.ErrLeaseLost) {
					t.Fatalf("the landing after the cancel committed = %v; want the cancel fence's refusal (ErrNotNext)", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the landing never returned after the cancel committed")
			}
			if n := rows(t, a, "entries"); n != 0 {
				t.Errorf("%d entries stored beside an acknowledged cancel, want 0", n)
			}
		})
	}
}

// TestAFenceGivenNothingToFenceIsRefused: a lease version below 1 or a
// negative count of cancels would skip the fence they stand for; the
// landing is refused as bad input and writes nothing.
func TestAFenceGivenNothingToFenceIsRefused(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, lease := leasedStep(t, a)
	if _, _, err := l.LandLeased(ctx, newAnswer("agent_a", "no lease"), 0, 0); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("a leased landing of version 0 = %v; want ErrBadInput", err)
	}
	if _, _, err := l.LandLeased(ctx, newAnswer("agent_a", "no cancels"), lease.Version, -1); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("a leased landing of -1 cancels = %v; want ErrBadInput", err)
	}
	if _, err := l.(coordination.UncancelledLanding).AppendUncancelled(ctx, newAnswer("agent_a", "no cancels"), -1); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("a host's landing of -1 cancels = %v; want ErrBadInput", err)
	}
	if n := rows(t, a, "entries"); n != 0 {
		t.Errorf("%d entries stored by landings refused; want 0", n)
	}
}

// TestAHostsLandingCountsTheCancelsInItsWrite: a host's step, which has no
// lease, lands through the same cancel fence (AppendUncancelled): refused,
// writing nothing and keeping its lock, once the session log holds a
// cancel its step did not begin with (recorded by a second holder of the
// session lock, after the service's count); landed with the count that
// includes it.
func TestAHostsLandingCountsTheCancelsInItsWrite(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "on another replica"}); err != nil {
		t.Fatal(err)
	}
	u := l.(coordination.UncancelledLanding)
	if _, err := u.AppendUncancelled(ctx, newAnswer("agent_a", "beside the cancel"), 0); !errors.Is(err, coordination.ErrNotNext) || errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("a host's landing beside a cancel = %v; want the cancel fence's refusal (ErrNotNext)", err)
	}
	if n := rows(t, a, "entries"); n != 0 {
		t.Fatalf("%d entries stored beside an acknowledged cancel, want 0", n)
	}
	got, err := u.AppendUncancelled(ctx, newAnswer("agent_a", "after the resume"), 1)
	if err != nil {
		t.Fatalf("the landing counting the cancel: %v; want it landed, its lock still its own", err)
	}
	if got.Step != 1 || got.AnswerNum != 1 {
		t.Errorf("landed as step %d, answer %d; want step 1, answer 1", got.Step, got.AnswerNum)
	}
}
