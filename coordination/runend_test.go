package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAStartAsARunEndsIsNeverRefusedAsRunningHere: a Start made while a run
// of the session ends either joins that run or starts the session again;
// it is never refused as "being run by a loop in this server" by the run
// that is over (its handle gone, its run lock not yet let go).
func TestAStartAsARunEndsIsNeverRefusedAsRunningHere(t *testing.T) {
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open})
	ctx := context.Background()
	for i := range 20 {
		s, err := svc.Create(ctx, simTeam(fmt.Sprintf("team_runend_%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := svc.Start(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for after := 0; after < 200 && time.Now().Before(deadline); {
			select {
			case <-r.Done():
				after++
			default:
			}
			if _, _, err := svc.Start(ctx, s.ID); errors.Is(err, coordination.ErrSessionRunning) {
				t.Fatalf("session %d: a Start as its run ended was refused: %v", i, err)
			}
		}
	}
}
