package coordination_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/rs/zerolog"
)

// TestACancelFromAnotherReplicaStopsASessionsCriteriaCall: criteria for a
// session are being written by a model on one service (replica A) when a
// cancel of the session is recorded through another sharing the store
// (replica B). A's call stops within a second, the criteria request says
// the session was cancelled, and nothing is attached. Before, only a
// cancel_team on A itself stopped it (its pending work); one sent to B let
// the call run to its end, paid for on the session's behalf.
func TestACancelFromAnotherReplicaStopsASessionsCriteriaCall(t *testing.T) {
	stores := map[string]func(t *testing.T) (a, b coordination.Store){
		"memory": func(*testing.T) (coordination.Store, coordination.Store) {
			st := memstore.New()
			return st, st
		},
		"postgres": func(t *testing.T) (coordination.Store, coordination.Store) {
			dsn := pgtest.Schema(t)
			return pgTenant(t, dsn), pgTenant(t, dsn)
		},
	}
	for name, replicas := range stores {
		t.Run(name, func(t *testing.T) {
			models, _, provs := coordtest.Team(t, 2)
			started, stopped := make(chan struct{}), make(chan time.Time, 1)
			provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				close(started)
				select {
				case <-ctx.Done():
					stopped <- time.Now()
					return providers.Action{}, providers.Usage{}, ctx.Err()
				case <-time.After(10 * time.Second):
					return providers.Action{}, providers.Usage{}, errors.New("dummy: never cancelled")
				}
			})
			h := &coordtest.Harness{T: t, Providers: provs}
			sa, sb := replicas(t)
			a := coordination.NewService(sa, coordination.Options{Open: h.Open, Logger: zerolog.Nop()})
			b := coordination.NewService(sb, coordination.Options{Open: h.Open, Logger: zerolog.Nop()})
			ctx := context.Background()
			s, err := a.Create(ctx, coordination.TeamSpec{Task: "Write a haiku about rivers", Models: models, Driver: coordination.DriverStep})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := a.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: models[0]})
				done <- err
			}()
			<-started
			t0 := time.Now()
			if _, err := b.Cancel(ctx, s.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case at := <-stopped:
				t.Logf("the criteria call stopped %v after the cancel", at.Sub(t0).Round(time.Millisecond))
			case <-time.After(time.Second):
				t.Fatal("the criteria call still ran a second after another replica recorded the session's cancel")
			}
			err = <-done
			if err == nil || !strings.Contains(err.Error(), "cancelled while its criteria were being written") {
				t.Fatalf("the criteria request returned %v; want it to say the session was cancelled meanwhile", err)
			}
			if got, err := sb.Session(ctx, s.ID); err != nil || len(got.Criteria) != 0 {
				t.Fatalf("the session holds %d criteria (%v) after its criteria call was stopped", len(got.Criteria), err)
			}
		})
	}
}
