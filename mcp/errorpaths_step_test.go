package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// failingInItsWorkspace is a service over a file store under state whose
// every step fails naming a file of the agent's workspace, as a tool's
// error does.
func failingInItsWorkspace(state string, relative bool) *coordination.Service {
	fail := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		return providers.Action{}, providers.Usage{}, fmt.Errorf("open %s: permission denied", filepath.Join(req.Workspace, "notes.md"))
	})
	open := func(providers.Spec) (providers.Provider, error) { return fail, nil }
	return coordination.NewService(filestore.New(state), coordination.Options{Open: open, Backends: backends.Config{}.Report, Logger: zerolog.Nop(), RelativeDirs: relative})
}

// shownOf is everything a client is shown of a session: team_status's
// text and structured result, whole, and the timeline resource.
func shownOf(t *testing.T, s *Server, id string) map[string]string {
	t.Helper()
	c := inProcess(t, s, false)
	status := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": id, "detail": "full"}))
	body, _ := json.Marshal(status.StructuredContent)
	events, err := readResource(t, c, eventsURI(id))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"team_status text": text(status), "team_status structured": string(body), "timeline": events.Text}
}

// TestAFailedStepsErrorNamesItsPathInTheSession: a server that hides its
// paths from clients (RelativeDirs: HTTP, tenants) hid them in its errors
// and in a cancel reason, but a failed step's error, kept whole in the
// ledger, reached the client unhidden as last_error, in the timeline, in
// the step's own result and its progress line. The path reads as the
// session's, and the reason stays.
func TestAFailedStepsErrorNamesItsPathInTheSession(t *testing.T) {
	state := t.TempDir()
	s := New(failingInItsWorkspace(state, true), Options{ValidateOutput: true})
	c := inProcess(t, s, false)
	decode(t, callTool(t, c, "start_team", `{"task":"t","models":["sim","sim"],"session_id":"leaky"}`), &startTeamResult{})
	stepRes := callTool(t, c, "step", `{"session_id":"leaky","agent_id":"agent_a"}`)
	stepBody, _ := json.Marshal(stepRes.StructuredContent)
	shown := shownOf(t, s, "leaky")
	shown["step's text"], shown["step's result"] = text(stepRes), string(stepBody)
	for what, s := range shown {
		if strings.Contains(s, state) {
			t.Errorf("%s shows the server's state directory %s:\n%s", what, state, s)
		}
		if !strings.Contains(s, "agents/agent_a/workspace/notes.md") || !strings.Contains(s, "permission denied") {
			t.Errorf("%s lost the path in the session or the reason:\n%s", what, s)
		}
	}
}

// TestAStepRecordedElsewhereShowsNoneOfItsServersPaths: a reader can hide
// only its own directories, so a step's error is recorded with the paths
// of the server that ran it hidden already, whether or not that server
// hides them from its own clients: read where its state directory is
// another (a replica with its own --state-dir, the session moved), it
// shows none of them.
func TestAStepRecordedElsewhereShowsNoneOfItsServersPaths(t *testing.T) {
	ran := t.TempDir()
	svc := failingInItsWorkspace(ran, false)
	ctx := context.Background()
	if _, err := svc.Create(ctx, coordination.TeamSpec{Task: "t", Models: []string{"sim", "sim"}, SessionID: "moved", Driver: coordination.DriverStep}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: "moved", AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	reads := t.TempDir()
	if err := os.CopyFS(filepath.Join(reads, "sessions", "moved"), os.DirFS(filepath.Join(ran, "sessions", "moved"))); err != nil {
		t.Fatal(err)
	}
	for what, s := range shownOf(t, New(failingInItsWorkspace(reads, true), Options{ValidateOutput: true}), "moved") {
		if strings.Contains(s, ran) {
			t.Errorf("%s shows the state directory of the server that ran the step, %s:\n%s", what, ran, s)
		}
		if !strings.Contains(s, "agents/agent_a/workspace/notes.md") {
			t.Errorf("%s lost the path in the session:\n%s", what, s)
		}
	}
}
