package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// A session lost to another server is logged as a warning, not an error: it
// is neither a bug nor the caller's mistake, and an operator's alert on
// error lines must not fire each time a stalled replica's session fails
// over. A bug (an error outside the vocabulary) stays an error, and a
// caller's mistake is not logged at all.
func TestALostSessionIsLoggedAsAWarningAndABugAsAnError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		level string // "" means no line
	}{
		{"lease lost", fmt.Errorf("the step lock of agent %q in session %q expired and was taken by another replica; this step is not recorded: %w", "agent_a", "s", coordination.ErrLeaseLost), "warn"},
		{"changed since read", fmt.Errorf("settling: %w", coordination.ChangedSinceRead("s", coordination.SessionFinished)), "warn"},
		{"internal", errors.New("a nil map was written to"), "error"},
		{"caller's mistake", fmt.Errorf("reading session team_1: %w", coordination.ErrSessionNotFound), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop()})
			srv := New(svc, Options{Logger: zerolog.New(&logged)})
			srv.handler.errorResult(context.WithValue(context.Background(), serviceKey{}, svc), "step", tc.err)
			levels := logLevels(t, logged.String())
			switch {
			case tc.level == "" && len(levels) > 0:
				t.Errorf("logged %v for a mistake the caller can correct; want no line:\n%s", levels, logged.String())
			case tc.level != "" && (len(levels) != 1 || levels[0] != tc.level):
				t.Errorf("logged at %v, want one line at %s:\n%s", levels, tc.level, logged.String())
			}
		})
	}
}

// logLevels reads the level of each JSON line zerolog wrote.
func logLevels(t *testing.T, out string) []string {
	t.Helper()
	var levels []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var l struct{ Level string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("the log line %q is not zerolog's JSON: %v", line, err)
		}
		levels = append(levels, l.Level)
	}
	return levels
}
