package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// ghostLockStore counts the step locks taken.
type ghostLockStore struct {
	*memstore.Store
	locks atomic.Int64
}

func (s *ghostLockStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	s.locks.Add(1)
	return s.Store.LockStep(ctx, id, agent)
}

// TestNoStepLockIsTakenForAnAgentOutsideTheTeam: the core checks the team
// before it takes a step lock (a store does not read the setup for it), so
// no caller of the step path can land an entry of an agent the team does
// not have, which every ledger reader would count.
func TestNoStepLockIsTakenForAnAgentOutsideTheTeam(t *testing.T) {
	st := &ghostLockStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	if err := coordination.StepState(svc, context.Background(), s.ID, "agent_z"); !errors.Is(err, coordination.ErrAgentNotFound) {
		t.Fatalf("a step of an agent outside the team: %v, want ErrAgentNotFound", err)
	}
	if n := st.locks.Load(); n != 0 {
		t.Errorf("%d step locks taken for an agent outside the team, want 0", n)
	}
	if err := coordination.StepState(svc, context.Background(), s.ID, s.AgentIDs()[0]); err != nil {
		t.Fatalf("a team member's step: %v", err)
	}
}
