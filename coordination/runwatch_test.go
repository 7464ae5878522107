package coordination_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// watchFailsFirst is a file store whose first session watch fails, as a
// database's does when the run starts during an outage.
type watchFailsFirst struct {
	*filestore.Store
	calls atomic.Int32
}

func (s *watchFailsFirst) Watch(ctx context.Context, id string) (<-chan coordination.Change, error) {
	if s.calls.Add(1) == 1 {
		return nil, fmt.Errorf("test: %w", coordination.ErrStoreUnavailable)
	}
	return s.Store.Watch(ctx, id)
}

// TestARunWhoseWatchFailedStillHearsAnotherProcessesCancel: a run's watch of
// its session fails as it starts; a cancel recorded by another process
// while its steps' model calls run still stops those calls: the watch is
// set up again within a second or two, and the run looks at its session
// each second meanwhile. Before, the watch was never set up again, and the cancel was
// seen only when a call ended (up to the step timeout away).
func TestARunWhoseWatchFailedStillHearsAnotherProcessesCancel(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	calling, stopped := make(chan struct{}, 4), make(chan time.Time, 4)
	for _, m := range models {
		provs[m] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			calling <- struct{}{}
			select {
			case <-ctx.Done():
				stopped <- time.Now()
				return providers.Action{}, providers.Usage{}, ctx.Err()
			case <-time.After(30 * time.Second):
				return coordtest.Answer("4"), providers.Usage{}, nil
			}
		})
	}
	dir := t.TempDir()
	st := &watchFailsFirst{Store: filestore.New(dir)}
	h := &coordtest.Harness{T: t, Providers: provs}
	h.Service = coordination.NewService(st, coordination.Options{Open: h.Open})
	s := h.Create(coordination.TeamSpec{Models: models})
	ctx := context.Background()
	r, _, err := h.Service.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-calling
	<-calling
	for deadline := time.Now().Add(5 * time.Second); st.calls.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run's watch was not set up again within 5 s")
		}
	}
	other := coordination.NewService(filestore.New(dir), coordination.Options{Open: h.Open})
	t0 := time.Now()
	if _, err := other.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-stopped:
		t.Logf("the calls stopped %v after the other process's cancel", at.Sub(t0).Round(time.Millisecond))
	case <-time.After(3 * time.Second):
		t.Fatal("the run's model calls still ran 3 s after another process cancelled the session")
	}
	<-r.Done()
}
