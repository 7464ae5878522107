package filestore_test

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAHolderAliveOnThisHostIsHeldThoughItsHeartbeatIsLate: a holder on
// this host whose process runs and holds the run lock is alive to a reader
// past its expiry (its heartbeat only late: a loaded machine, a full disk),
// and abandoned once it lets the run lock go without releasing the lease.
func TestAHolderAliveOnThisHostIsHeldThoughItsHeartbeatIsLate(t *testing.T) {
	st := filestore.New(t.TempDir())
	ctx := context.Background()
	if err := st.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, err := st.LockRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireRun(ctx, "s", coordination.ThisProcess("late"), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(40 * time.Millisecond)
	if l, err := st.ReadRun(ctx, "s"); err != nil || !l.Held(time.Now()) {
		t.Errorf("a live holder here, past its expiry = %+v, %v; want held", l, err)
	}
	unlock()
	if l, err := st.ReadRun(ctx, "s"); err != nil || !l.Abandoned(time.Now()) {
		t.Errorf("past its expiry without its run lock = %+v, %v; want abandoned", l, err)
	}
}
