package coordtest

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// RunDied makes session id's run one whose owner died on another host, so
// that only its lease's expiry tells: a short lease in st, waited out past
// the clock skew allowed. The session then reads interrupted.
func RunDied(t testing.TB, st coordination.LeaseStore, id string) {
	t.Helper()
	dead := coordination.LeaseOwner{ID: "killed", Host: "another-host.invalid", PID: 4242}
	l, err := st.AcquireRun(context.Background(), id, dead, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(l.Expires.Add(coordination.MaxClockSkew + 50*time.Millisecond)))
}
