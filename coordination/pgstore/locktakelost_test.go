package pgstore

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestALockTakeWhoseCallerGaveUpIsLetGo: a step lock or a run lock whose
// take committed while its caller's context ended is neither held nor left
// to expire: the next heartbeat deletes its row, and the agent can step
// (the session can run) again well before lockTTL.
func TestALockTakeWhoseCallerGaveUpIsLetGo(t *testing.T) {
	for _, tc := range []struct {
		name, session, lock string
		take                func(s *Store, ctx context.Context) (func(), error)
	}{
		{"step lock", "lost-step", "step:agent_a", func(s *Store, ctx context.Context) (func(), error) {
			l, err := s.LockStep(ctx, "lost-step", "agent_a")
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}},
		{"run lock", "lost-run", "run", func(s *Store, ctx context.Context) (func(), error) {
			return s.LockRun(ctx, "lost-run")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := pgtest.Schema(t)
			a := replicaOn(t, dsn, Options{})
			bg := context.Background()
			if err := a.Create(bg, storetest.NewSession(tc.session)); err != nil {
				t.Fatal(err)
			}
			locked := func() bool {
				var n int
				if err := a.db.pool.QueryRow(bg, `SELECT count(*) FROM locks WHERE tenant = $1 AND session_id = $2 AND name = $3`, a.tenant, tc.session, tc.lock).Scan(&n); err != nil {
					t.Error(err)
				}
				return n > 0
			}
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			// A replica of its own, its heartbeat run by hand (deleteGone).
			gaveUp := besideOn(t, dsn, a, func(c net.Conn) net.Conn {
				// The caller gives up once the take committed, before its
				// answer is read, as a cancelled request's would.
				return &cutAfter{Conn: c, mark: []byte(tc.session), committed: locked, lose: func() error {
					cancel()
					time.Sleep(50 * time.Millisecond) // pgx's context watch sets its deadline
					return &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
				}}
			})
			if _, err := tc.take(gaveUp, ctx); err == nil {
				t.Fatal("a take whose caller gave up before its answer succeeded")
			}
			if !locked() {
				t.Fatal("the abandoned take's lock row is not there; the context ended before the commit, which tests nothing")
			}
			gaveUp.db.deleteGone(bg)
			release, err := tc.take(a, bg)
			if err != nil {
				var busy *coordination.BusyError
				var running *coordination.RunningError
				if errors.As(err, &busy) || errors.As(err, &running) {
					t.Fatalf("after a take whose caller gave up and the next heartbeat: %v; want the lock free, not held for lockTTL", err)
				}
				t.Fatal(err)
			}
			release()
		})
	}
}
