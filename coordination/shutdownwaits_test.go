package coordination_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// heldRelease is a store whose run lease release waits for release: a run
// that has ended, gone from the service's runs, still letting its lease go.
type heldRelease struct {
	*memstore.Store
	once             sync.Once
	entered, release chan struct{}
}

func (h *heldRelease) ReleaseRun(ctx context.Context, id string, version int64) error {
	h.once.Do(func() { close(h.entered); <-h.release })
	return h.Store.ReleaseRun(ctx, id, version)
}

// TestShutdownWaitsForARunsLastWrites: Shutdown returns only once a run
// that ended just before it has let its lease go. The run leaves the
// service's runs before that write, and Shutdown returned without it: the
// caller then closed the store (a database pool closed under the release,
// a test's directory removed under a file store's lease file).
func TestShutdownWaitsForARunsLastWrites(t *testing.T) {
	st := &heldRelease{Store: memstore.New(), entered: make(chan struct{}), release: make(chan struct{})}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the run never let its lease go")
	}
	shut := make(chan error, 1)
	go func() { shut <- svc.Shutdown(ctx) }()
	select {
	case err := <-shut:
		close(st.release)
		t.Fatalf("Shutdown returned (%v) while a run was still letting its lease go", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(st.release)
	select {
	case err := <-shut:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return once the run's last write was done")
	}
}
