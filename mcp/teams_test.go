package mcp

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// teamsDir writes team files for a server's --teams-dir.
func teamsDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const massgenTeam = `agents:
  - id: optimist
    backend: {type: sim, model: strong}
  - id: pessimist
    backend: {type: sim, model: strong}
  - id: judge
    backend: {type: sim, model: strong, cwd: /srv/work}
orchestrator:
  max_new_answers_per_agent: 1
  context_paths:
    - path: brief.md
ui: {display_type: simple}
`

func TestRunTeamStartsANamedTeamFileWithItsAgentsRulesAndContext(t *testing.T) {
	dir := teamsDir(t, map[string]string{"review.yaml": massgenTeam, "brief.md": "The brief: be exact."})
	srv := newMemServer(t, Options{TeamsDir: dir})
	c := inProcess(t, srv, false)
	res := callTool(t, c, "start_team", `{"team": "review", "task": "What is 17 * 23?", "max_rounds": 3, "context": [{"text": "Caller's note."}]}`)
	var out startTeamResult
	decode(t, res, &out)
	if len(out.Agents) != 3 || out.Agents[0].ID != "optimist" || out.Agents[2].Model != "sim/strong" {
		t.Fatalf("agents: %+v", out.Agents)
	}
	if out.Rules.MaxAnswersPerAgent != 1 || out.Rules.MaxRounds != 3 {
		t.Fatalf("rules (file's answers cap, caller's max_rounds): %+v", out.Rules)
	}
	s, err := srv.handler.svc(context.Background()).Store().Session(context.Background(), out.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Context) != 2 || !strings.Contains(s.Context[0], "The brief: be exact.") || s.Context[1] != "Caller's note." {
		t.Fatalf("context (the file's, then the caller's): %q", s.Context)
	}
	res = callTool(t, c, "step", `{"session_id": "`+out.SessionID+`", "agent_id": "optimist"}`)
	if res.IsError {
		t.Fatalf("step: %s", text(res))
	}

	// run_team too, and the file's context reaches the session.
	res = callTool(t, c, "run_team", `{"team": "review", "task": "What is 17 * 23?", "wait": true}`)
	var result struct {
		Status      string  `json:"status"`
		FinalAnswer *string `json:"final_answer"`
	}
	decode(t, res, &result)
	if result.Status != "finished" || result.FinalAnswer == nil {
		t.Fatalf("run_team with a team: %s", text(res))
	}
}

func TestTeamArgumentErrors(t *testing.T) {
	dir := teamsDir(t, map[string]string{"ok.yaml": "agents: [{model: sim}, {model: sim}]\n", "broken.yaml": "agents: [{model: nosuch/x}]\n"})
	c := inProcess(t, newMemServer(t, Options{TeamsDir: dir}), false)
	wantError(t, callTool(t, c, "run_team", `{"team": "missing", "task": "x"}`), "team_not_found", "missing")
	wantError(t, callTool(t, c, "run_team", `{"team": "../ok", "task": "x"}`), "team_not_found", "not a team name")
	wantError(t, callTool(t, c, "start_team", `{"team": "ok", "models": ["sim"], "task": "x"}`), "bad_input", "not both")
	res := callTool(t, c, "start_team", `{"team": "broken", "task": "x"}`)
	wantError(t, res, "team_unusable", "broken", "the operator must fix its file")
	if strings.Contains(text(res), dir) {
		t.Fatalf("the error shows the server's teams directory: %s", text(res))
	}

	none := inProcess(t, newMemServer(t, Options{}), false)
	wantError(t, callTool(t, none, "run_team", `{"team": "ok", "task": "x"}`), "team_not_found", "--teams-dir")
}

func TestListBackendsListsTheTeams(t *testing.T) {
	dir := teamsDir(t, map[string]string{"review.yaml": massgenTeam, "brief.md": "x", "duo.yml": "agents: [{model: sim}, {model: sim/weak}]\n", "bad.yaml": "agents: 3\n", "notes.txt": "not a team"})
	c := inProcess(t, newMemServer(t, Options{TeamsDir: dir}), false)
	var out listBackendsResult
	res := callTool(t, c, "list_backends", `{}`)
	decode(t, res, &out)
	if len(out.Teams) != 3 {
		t.Fatalf("teams: %+v", out.Teams)
	}
	byName := map[string]teamView{}
	for _, tv := range out.Teams {
		byName[tv.Name] = tv
	}
	if v := byName["review"]; v.Format != "MassGen" || strings.Join(v.Models, ",") != "sim/strong,sim/strong,sim/strong" || v.Problem != "" {
		t.Errorf("review: %+v", v)
	}
	if v := byName["duo"]; v.Format != "massgen-mcp" || len(v.Models) != 2 {
		t.Errorf("duo: %+v", v)
	}
	if v := byName["bad"]; v.Problem == "" || strings.Contains(v.Problem, dir) {
		t.Errorf("bad: %+v", v)
	}
	if !strings.Contains(text(res), "- review (MassGen): sim/strong") {
		t.Errorf("text lacks the teams:\n%s", text(res))
	}
}

func TestStrictConfigServerRefusesTeamsWithIgnoredKeys(t *testing.T) {
	dir := teamsDir(t, map[string]string{"review.yaml": massgenTeam, "brief.md": "x"})
	c := inProcess(t, newMemServer(t, Options{TeamsDir: dir, StrictConfig: true}), false)
	wantError(t, callTool(t, c, "start_team", `{"team": "review", "task": "x"}`), "team_unusable", "not honoured")
}

// TestATeamFilesAgentsCarryTheirKeyGrantAndAClientsNone pins that a team
// file's base_url and api_key_env travel with that team's agents to Open
// (providers.KeyGrant), and that a client naming the same spec text gets no
// grant: the team file's endpoint joins no server-wide list.
func TestATeamFilesAgentsCarryTheirKeyGrantAndAClientsNone(t *testing.T) {
	const vllm = "vllm/qwen@http://127.0.0.1:9/v1"
	dir := teamsDir(t, map[string]string{"local.yaml": "agents:\n  - backend: {type: vllm, model: qwen, base_url: 'http://127.0.0.1:9/v1', api_key_env: DUMMY_VLLM_KEY}\n  - model: sim\n"})
	var mu sync.Mutex
	grants := map[string][]providers.KeyGrant{}
	open := func(sp providers.Spec) (providers.Provider, error) {
		mu.Lock()
		grants[sp.String()] = append(grants[sp.String()], sp.Grant)
		mu.Unlock()
		return sim.New(providers.Spec{Backend: "sim", Model: "sim"})
	}
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: open, Logger: zerolog.Nop()})
	c := inProcess(t, New(svc, Options{TeamsDir: dir, ValidateOutput: true}), false)
	if res := callTool(t, c, "start_team", `{"team": "local", "task": "x"}`); res.IsError {
		t.Fatalf("start_team with the team: %s", text(res))
	}
	if res := callTool(t, c, "start_team", `{"models": ["`+vllm+`", "sim"], "task": "x"}`); res.IsError {
		t.Fatalf("start_team with the same spec named by the client: %s", text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	want := []providers.KeyGrant{{Operator: true, KeyEnv: "DUMMY_VLLM_KEY"}, {}}
	if !reflect.DeepEqual(grants[vllm], want) {
		t.Fatalf("Open saw %s with grants %+v, want the team file's then none (%+v)", vllm, grants[vllm], want)
	}
}
