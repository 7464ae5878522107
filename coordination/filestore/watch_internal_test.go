package filestore

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestWatchPollsWhenInotifyIsUnavailable runs the watch cases on a store
// that cannot use inotify (none on the system, or its limit reached): the
// watch looks at the session's files instead, and keeps the same contract.
func TestWatchPollsWhenInotifyIsUnavailable(t *testing.T) {
	storetest.RunWatch(t, func(t *testing.T) coordination.Store {
		s := New(t.TempDir())
		s.notifyFailed = true
		return s
	})
}
