package filestore

import (
	"runtime"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestWatchPollsWhenInotifyIsUnavailable runs the watch cases on a store
// that cannot use inotify (none on the system, or its limit reached): the
// watch looks at the session's files instead, and keeps the same contract.
// It runs on one processor: there a poll that took its first look in the
// background would look only after the step written at once, so such a miss
// shows on every run, not only on a loaded machine.
func TestWatchPollsWhenInotifyIsUnavailable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	storetest.RunWatch(t, func(t *testing.T) coordination.Store {
		s := New(t.TempDir())
		s.notifyFailed = true
		return s
	})
}
