package coordination

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestRefusedClaimTellsARefusalFromALostAnswer: a claim the store turned
// down wrote nothing and is not undone; any other failure may have come
// after the write.
func TestRefusedClaimTellsARefusalFromALostAnswer(t *testing.T) {
	for _, tc := range []struct {
		err     error
		refused bool
	}{
		{&RunningError{Session: "s", By: "another replica"}, true},
		{&BusyError{Session: "s", Agent: "agent_a"}, true},
		{fmt.Errorf("reading: %w", ErrSessionNotFound), true},
		{fmt.Errorf("%w: agent_z", ErrAgentNotFound), true},
		{fmt.Errorf("%w: a bad id", ErrBadInput), true},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("read tcp: connection reset by peer"), false},
	} {
		if got := refusedClaim(tc.err); got != tc.refused {
			t.Errorf("refusedClaim(%v) = %v, want %v", tc.err, got, tc.refused)
		}
	}
}

// TestOnlyAClaimWhoseUndoRestoresTheSessionIsUndone: a failed run claim is
// taken back, by the version it would have written, only over a lease
// never claimed or released; one that took over from a dead run, or whose
// lease could not be read first, is left to expire.
func TestOnlyAClaimWhoseUndoRestoresTheSessionIsUndone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prev    *RunLease
		err     error
		version int64
		undo    bool
	}{
		{"never claimed", nil, nil, 1, true},
		{"released", &RunLease{Version: 3, Released: true}, nil, 4, true},
		{"a dead run's", &RunLease{Version: 3}, nil, 0, false},
		{"unread", nil, errors.New("connection refused"), 0, false},
	} {
		v, ok := undoableRunClaim(tc.prev, tc.err)
		if v != tc.version || ok != tc.undo {
			t.Errorf("%s: undoableRunClaim = %d, %v; want %d, %v", tc.name, v, ok, tc.version, tc.undo)
		}
	}
}
