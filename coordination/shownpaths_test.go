package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// HidePaths names a session's files by the session, and the directories
// above it by what they are, only for clients that must not see the
// server's paths.
func TestHidePathsNamesTheSessionAndThePathInsideIt(t *testing.T) {
	state := t.TempDir()
	tenant := filepath.Join(state, "tenants", "alice")
	sessions := filepath.Join(tenant, "sessions")
	hidden := coordination.NewService(filestore.New(tenant), coordination.Options{RelativeDirs: true})
	for in, want := range map[string]string{
		sessions + "/team_1/agents/agent_a/001/answer.json is damaged":          "session team_1's agents/agent_a/001/answer.json is damaged",
		"open " + sessions + "/team_1: permission denied":                       "open session team_1's directory: permission denied",
		"cannot list " + sessions + ": EIO":                                     "cannot list the sessions directory: EIO",
		"lock " + tenant + "/.lock (busy)":                                      "lock the state directory/.lock (busy)",
		`"` + sessions + `/team_2/session.json", then ` + sessions + "/team_2/": `"session team_2's session.json", then session team_2's directory`,
		"nothing here": "nothing here",
	} {
		if got := hidden.HidePaths(in); got != want {
			t.Errorf("HidePaths(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	shown := coordination.NewService(filestore.New(tenant), coordination.Options{})
	if in := sessions + "/team_1/session.json"; shown.HidePaths(in) != in {
		t.Errorf("without RelativeDirs the operator's paths stay: %q", shown.HidePaths(in))
	}
}

// TestAnUnreachableStoresDetailsAreTheOperators: a database's connection
// error names its role, database and host; a client that must not see the
// server's paths is told the store could not be reached, not those.
func TestAnUnreachableStoresDetailsAreTheOperators(t *testing.T) {
	tenant := t.TempDir()
	down := fmt.Errorf("reading session team_1: %w: failed to connect to `user=massgen_app database=tenants`: 10.0.0.7:5432 (db-host): dial error", coordination.ErrStoreUnavailable)
	hidden := coordination.NewService(filestore.New(tenant), coordination.Options{RelativeDirs: true})
	ctx := context.Background()
	if got := hidden.ShownError(ctx, down); strings.Contains(got, "massgen_app") || strings.Contains(got, "10.0.0.7") || !strings.Contains(got, "could not be reached") {
		t.Errorf("ShownError(an outage) = %q", got)
	}
	if !hidden.StoreUnreachable(ctx, down) || hidden.StoreUnreachable(ctx, errors.New("a damaged session")) {
		t.Error("StoreUnreachable tells an outage from another error wrongly")
	}
	// A request whose own context ended is told that, not an outage: a
	// database's driver reports an ended context as a lost connection.
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if hidden.StoreUnreachable(ended, down) {
		t.Error("an error of a request whose context ended reads as the store unreachable")
	}
	if got := hidden.ShownError(ended, down); strings.Contains(got, "massgen_app") || !strings.Contains(got, "request ended") {
		t.Errorf("ShownError(an outage, the request ended) = %q", got)
	}
	other := errors.New("session team_1 is not here")
	if got := hidden.ShownError(ctx, other); got != other.Error() {
		t.Errorf("ShownError(another error) = %q", got)
	}
	shown := coordination.NewService(filestore.New(tenant), coordination.Options{})
	if got := shown.ShownError(ctx, down); got != down.Error() {
		t.Errorf("without RelativeDirs the operator reads the whole error: %q", got)
	}
}
