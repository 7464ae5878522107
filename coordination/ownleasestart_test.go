package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// tidyFailStore is a fullDiskStore whose Tidy (made by every run's start,
// after its claim) fails once when armed, as any start failing after its
// claim does (an MCP server that would not start, a setup unreadable).
type tidyFailStore struct {
	fullDiskStore
	tidyArmed atomic.Bool
}

func (s *tidyFailStore) Tidy(ctx context.Context, id string) (coordination.Tidied, error) {
	if s.tidyArmed.CompareAndSwap(true, false) {
		return coordination.Tidied{}, errors.New("test: an MCP server would not start")
	}
	return coordination.Tidied{}, nil // the memory store has nothing to tidy
}

// TestAFailedStartOfItsOwnInterruptedRunLeavesTheSessionInterrupted: a
// run that could not record its finish left its lease to expire, so the
// session reads interrupted; the same service takes it up again (as serve
// --resume-interrupted does) and the start fails after its claim. The claim
// is left to expire, and the session reads interrupted again, for a
// replica to take up. Before, the claim was released (only another
// process's dead run's was left), and the session read decided for good
// with nothing running it.
func TestAFailedStartOfItsOwnInterruptedRunLeavesTheSessionInterrupted(t *testing.T) {
	st := &tidyFailStore{fullDiskStore: fullDiskStore{Store: memstore.New()}}
	st.armed.Store(true)
	h, s := decidingForAgentA(t, st, st.Store)
	ctx := context.Background()
	if _, err := h.Service.Run(ctx, s.ID, nil); err == nil {
		t.Fatal("the run finished though the store refused its finish")
	}
	waitInterrupted(t, h.Service, s.ID)
	st.tidyArmed.Store(true)
	if _, _, err := h.Service.Start(ctx, s.ID); err == nil {
		t.Fatal("the start succeeded though its tidy failed")
	}
	waitInterrupted(t, h.Service, s.ID)
	if l, err := st.Store.ReadRun(ctx, s.ID); err != nil || l == nil || l.Released {
		t.Fatalf("the failed start's lease = %+v (%v), want left unreleased", l, err)
	}
}
