package coordination_test

import (
	"path/filepath"
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
