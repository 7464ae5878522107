package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// heardWithin is how soon another replica's watcher must hear of a change
// found committed: issue 31's "a client polling replica B sees a run on A
// within a second". A NOTIFY takes milliseconds; one never sent is never
// heard.
const heardWithin = time.Second

// TestASessionEntryFoundOnTheNextReadIsHeardByTheOtherReplicas: a session
// entry (a cancel, a revote, a decision, a finish) commits, then notifies
// (commitThenNotify); one whose connection was lost between the two
// committed unheard and told its caller the database was unavailable. The
// caller does not write it again: it waits out the outage and reads the
// log first (coordination's "look before recording"), which finds it. The
// other replicas' watchers must hear of it then, not at the session's next
// change or a follower's poll. Both reads a caller makes are played: the
// kept ledger read on (LendState) and the whole one (Ledger).
func TestASessionEntryFoundOnTheNextReadIsHeardByTheOtherReplicas(t *testing.T) {
	reads := map[string]func(context.Context, *Store) ([]coordination.SessionEntry, error){
		"LendState": func(ctx context.Context, st *Store) ([]coordination.SessionEntry, error) {
			l, _, _, err := st.LendState(ctx, "s")
			if err != nil {
				return nil, err
			}
			return l.Session, nil
		},
		"Ledger": func(ctx context.Context, st *Store) ([]coordination.SessionEntry, error) {
			l, err := st.Ledger(ctx, "s")
			if err != nil {
				return nil, err
			}
			return l.Session, nil
		},
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			l := newLostAnswer(t)
			ctx := context.Background()
			cut, armed := l.cutBeforeNotify()
			// The writer has read the session before, as a run has.
			if _, err := read(ctx, cut); err != nil {
				t.Fatal(err)
			}
			e := coordination.SessionEntry{Kind: coordination.SessionCancelled, Time: time.Now(), Reason: "committed unheard"}
			armed.Store(true)
			if _, err := cut.AppendSession(ctx, "s", e); !unavailable(err) {
				t.Fatalf("a session entry whose connection was lost before its NOTIFY = %v; want the database unavailable", err)
			}
			if armed.Load() {
				t.Fatal("the entry's batch never carried its NOTIFY, which tests nothing")
			}
			l.waitForRows("session_log", 1, "session entries after the cut write (its COMMIT ran)")
			l.notYetHeard(sessionChanged, "an entry")
			log, err := read(ctx, cut)
			if err != nil {
				t.Fatal(err)
			}
			if len(log) != 1 || log[0].Kind != coordination.SessionCancelled {
				t.Fatalf("the log read after the cut write: %+v; want the cancel it committed", log)
			}
			l.mustHear(sessionChanged, "a session entry its writer's next read found committed")
		})
	}
}
