package coordination_test

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// TestAnAcknowledgedCancelIsKeptByALeasedLanding: a store whose step locks
// are LeasedLandings counts the session's cancels in the landing's write,
// not the service before it: the service gives it the count the step began
// with, and a reply that arrives after the cancel is refused there.
func TestAnAcknowledgedCancelIsKeptByALeasedLanding(t *testing.T) {
	st := &leasedStore{Store: memstore.New()}
	coordtest.CancelKept(t, st, st.Store)
	if st.lands.Load() == 0 {
		t.Fatal("no step landed through LandLeased: the test did not play the leased landing")
	}
}
