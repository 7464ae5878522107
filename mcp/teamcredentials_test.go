package mcp

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// A team file is the operator's, and its base_url may carry the proxy's
// credentials (https://user:password@proxy/v1; Go's HTTP client sends them
// as basic auth). Every tenant may list and run the team, so neither the
// listing (list_backends) nor a session run from it (its agents, in
// start_team's result and team_status) may show the password.
func TestATeamFilesBaseURLCredentialsReachNoClient(t *testing.T) {
	const password = "hunter2-proxy-pass"
	dir := teamsDir(t, map[string]string{"proxied.yaml": "agents:\n" +
		"  - id: a\n    backend: {type: vllm, model: m, base_url: \"https://opsuser:" + password + "@llm-proxy.corp.internal/v1\"}\n" +
		"  - id: b\n    backend: {type: sim, model: strong}\n"})
	// Every agent simulated: nothing is sent anywhere.
	open := func(spec providers.Spec) (providers.Provider, error) {
		return sim.New(providers.Spec{Backend: "sim", Model: "strong"})
	}
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()})
	srv := New(svc, Options{TeamsDir: dir, ValidateOutput: true})
	c := inProcess(t, srv, false)

	res := callTool(t, c, "list_backends", `{}`)
	if strings.Contains(text(res), password) || strings.Contains(mustJSON(res.StructuredContent), password) {
		t.Errorf("list_backends shows the team file's base URL password:\n%s", text(res))
	}
	res = callTool(t, c, "start_team", `{"team": "proxied", "task": "What is 17 * 23?"}`)
	if res.IsError {
		t.Fatalf("start_team: %s", text(res))
	}
	if strings.Contains(text(res), password) || strings.Contains(mustJSON(res.StructuredContent), password) {
		t.Errorf("start_team's result shows the team file's base URL password:\n%s", text(res))
	}
	var out startTeamResult
	decode(t, res, &out)
	res = callTool(t, c, "team_status", `{"session_id": "`+out.SessionID+`"}`)
	if strings.Contains(text(res), password) || strings.Contains(mustJSON(res.StructuredContent), password) {
		t.Errorf("team_status shows the team file's base URL password:\n%s", text(res))
	}
}
