package mcp

import (
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
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
	const password = "dummy-proxy-pass-not-real"
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

// run_team's result and the session's resources (status, listing, an
// answer) name a team file agent's model without its base URL's user info
// or query, as start_team and team_status do.
func TestATeamFilesBaseURLCredentialsReachNoRunResultOrResource(t *testing.T) {
	const password, token = "dummy-proxy-pass-not-real", "PLANTED-query-token"
	spec := "vllm/m@https://opsuser:" + password + "@llm-proxy.corp.internal/v1?token=" + token
	dir := teamsDir(t, map[string]string{"proxied.yaml": "agents:\n" +
		"  - {id: a, model: \"" + spec + "\"}\n  - {id: b, model: \"" + spec + "\"}\n"})
	// Every agent simulated: nothing is sent anywhere.
	open := func(providers.Spec) (providers.Provider, error) {
		return sim.New(providers.Spec{Backend: "sim", Model: "strong", Params: map[string]string{"accuracy": "1"}})
	}
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()})
	c := inProcess(t, New(svc, Options{TeamsDir: dir, ValidateOutput: true}), false)

	res := callTool(t, c, "run_team", `{"team": "proxied", "task": "What is 17 * 23?"}`)
	if res.IsError {
		t.Fatalf("run_team: %s", text(res))
	}
	shown := []string{"run_team: " + text(res) + mustJSON(res.StructuredContent)}
	if !strings.Contains(shown[0], "vllm/m@https://llm-proxy.corp.internal/v1") {
		t.Errorf("run_team's result does not name the model as vllm/m@https://llm-proxy.corp.internal/v1:\n%s", shown[0])
	}
	var out struct {
		SessionID string `json:"session_id"`
		Answers   []struct {
			Label string `json:"label"`
		} `json:"answers"`
	}
	decode(t, res, &out)
	uris := []string{"massgen://sessions", "massgen://sessions/" + out.SessionID + "/status"}
	for _, a := range out.Answers {
		uris = append(uris, "massgen://sessions/"+out.SessionID+"/answers/"+a.Label)
	}
	for _, uri := range uris {
		read, err := c.ReadResource(t.Context(), mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: uri}})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		shown = append(shown, uri+": "+mustJSON(read.Contents))
	}
	all := strings.Join(shown, "\n")
	for _, secret := range []string{password, token, "opsuser"} {
		if strings.Contains(all, secret) {
			t.Errorf("a client sees the team file's base URL credentials (%s):\n%s", secret, all)
		}
	}
}

// A team file whose base_url cannot be used (written without its scheme)
// is listed with its problem, and refused when named, without the URL's
// credentials: every tenant reads both.
func TestABrokenTeamFilesBaseURLCredentialsAreNotInItsProblem(t *testing.T) {
	const password = "dummy-proxy-pass-not-real"
	dir := teamsDir(t, map[string]string{"typo.yaml": "agents:\n" +
		"  - id: a\n    backend: {type: vllm, model: m, base_url: \"opsuser:" + password + "@llm-proxy.corp.internal/v1\"}\n" +
		"  - id: b\n    backend: {type: sim, model: strong}\n"})
	c := inProcess(t, newMemServer(t, Options{TeamsDir: dir}), false)
	res := callTool(t, c, "list_backends", `{}`)
	listed := text(res) + mustJSON(res.StructuredContent)
	if !strings.Contains(listed, `base URL \"llm-proxy.corp.internal/v1\" is not an http(s) URL`) {
		t.Errorf("list_backends does not say what is wrong with typo's base URL:\n%s", listed)
	}
	res = callTool(t, c, "run_team", `{"team": "typo", "task": "What is 17 * 23?"}`)
	for what, shown := range map[string]string{"list_backends": listed, "run_team": text(res)} {
		if strings.Contains(shown, password) || strings.Contains(shown, "opsuser") {
			t.Errorf("%s shows the team file's base URL credentials:\n%s", what, shown)
		}
	}
}
