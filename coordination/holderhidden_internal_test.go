package coordination

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestALeaseHoldersProcessIsHiddenFromClients: a refusal naming the run's
// holder reads, for a client that must not see the server (HTTP tenants),
// without its pid, host and heartbeat; the operator's own text keeps them.
func TestALeaseHoldersProcessIsHiddenFromClients(t *testing.T) {
	l := &RunLease{LeaseOwner: LeaseOwner{ID: "run-7", Host: "build-1.internal", PID: 412}, Renewed: time.Now()}
	msg := (&RunningError{Session: "s1", By: holder(l)}).Error()
	busy := (&BusyError{Session: "s1", Agent: "agent_a", By: holder(l)}).Error()
	hidden := &Service{opts: Options{RelativeDirs: true}, log: zerolog.Nop()}
	for _, text := range []string{msg, busy} {
		got := hidden.HidePaths(text)
		if strings.Contains(got, "build-1") || strings.Contains(got, "412") || !strings.Contains(got, "run-7 (another server process)") {
			t.Errorf("a client reads %q", got)
		}
	}
	if got := (&Service{}).HidePaths(msg); got != msg {
		t.Errorf("the operator's text changed: %q", got)
	}
}
