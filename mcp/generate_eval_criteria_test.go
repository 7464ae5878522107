package mcp

import (
	"net"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// noBackends hides every key and local server from the process, so the
// default model cannot be found whatever machine the test runs on.
func noBackends(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	for _, b := range providers.Backends() {
		for _, v := range b.KeyEnv {
			t.Setenv(v, "")
		}
		if b.BaseURLEnv != "" && len(b.KeyEnv) == 0 {
			t.Setenv(b.BaseURLEnv, closed)
		}
	}
}

func TestGenerateEvalCriteriaWithANamedSim(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var out generateCriteriaResult
	res := callTool(t, c, "generate_eval_criteria", mustJSON(map[string]any{
		"task": "Plan the migration of the billing database", "model": "sim", "count": 4}))
	decode(t, res, &out)
	if out.Source != "generated" || out.Kind != "plan" || out.Model != "sim" || len(out.Criteria) != 4 || out.Criteria[0].Category != "must" {
		t.Fatalf("result = %+v", out)
	}
	if len(out.MassGen.Criteria) != 4 || out.MassGen.Criteria[0].Category != "primary" || out.MassGen.Criteria[1].Category != "standard" {
		t.Errorf("massgen_eval_criteria = %+v", out.MassGen)
	}
	if msg := text(res); !strings.Contains(msg, "E1 [must] [simulated]") || !strings.Contains(msg, "verify by:") {
		t.Errorf("text rendering:\n%s", msg)
	}
}

func TestGenerateEvalCriteriaWithNoUsableModelGivesMarkedDefaults(t *testing.T) {
	noBackends(t)
	c := inProcess(t, newMemServer(t, Options{}), false)
	var out generateCriteriaResult
	decode(t, callTool(t, c, "generate_eval_criteria", mustJSON(map[string]any{"task": "Write a blog post announcing our new office"})), &out)
	if out.Source != "default" || out.Kind != "writing" || len(out.Criteria) != 5 || out.Model != "" {
		t.Fatalf("result = %+v", out)
	}
	for _, want := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "built-in criteria for writing tasks"} {
		if !strings.Contains(out.Note, want) {
			t.Errorf("note %q lacks %q", out.Note, want)
		}
	}
}

func TestGenerateEvalCriteriaConvertsWrittenCriteriaAndAttachesThem(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"}})), &started)

	var out generateCriteriaResult
	decode(t, callTool(t, c, "generate_eval_criteria", mustJSON(map[string]any{
		"session_id": started.SessionID,
		"criteria": []map[string]any{
			{"id": "exact", "name": "Exactness", "description": "The product is exact", "weight": 0.6},
			{"name": "Working", "description": "Shows the multiplication", "weight": 0.4},
			{"text": "One line", "category": "stretch"},
		}})), &out)
	if out.Source != "provided" || out.SessionID != started.SessionID || out.Kind != "other" {
		t.Fatalf("result = %+v", out)
	}
	var cats []string
	for _, it := range out.Criteria {
		cats = append(cats, it.ID+":"+it.Category)
	}
	if strings.Join(cats, " ") != "exact:must E2:should E3:could" {
		t.Errorf("categories %v", cats)
	}

	var st coordination.StatusView
	decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID})), &st)
	if len(st.Criteria) != 3 || st.Criteria[0].Text != "The product is exact" {
		t.Errorf("team_status criteria = %+v", st.Criteria)
	}

	var stepped coordination.StepResult
	decode(t, callTool(t, c, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})), &stepped)
	wantError(t, callTool(t, c, "generate_eval_criteria", mustJSON(map[string]any{
		"session_id": started.SessionID, "criteria": []map[string]any{{"text": "late"}}})),
		"session_started", "before the first step")
}

func TestGenerateEvalCriteriaErrorsSayWhatToDo(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	for _, tc := range []struct {
		name, args, code string
		words            []string
	}{
		{"count out of range", `{"task": "t", "model": "sim", "count": 9}`, "bad_criteria", []string{"count 9 must be from 3 to 8"}},
		{"two musts", `{"task": "t", "criteria": [{"text": "a", "category": "must"}, {"text": "b", "category": "primary"}]}`, "bad_criteria", []string{"keep exactly one must"}},
		{"written and a model", `{"task": "t", "model": "sim", "criteria": [{"text": "a"}]}`, "bad_input", []string{"count and model do not apply"}},
		{"unknown kind", `{"task": "t", "kind": "poetry"}`, "bad_arguments", nil},
		{"no task", `{"model": "sim"}`, "bad_input", []string{"the task is empty"}},
		{"unknown session", `{"session_id": "nope", "model": "sim"}`, "session_not_found", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, callTool(t, c, "generate_eval_criteria", tc.args), tc.code, tc.words...)
		})
	}
}

// TestGenerateEvalCriteriaSchemaSnapshot pins generate_eval_criteria's definition (testdata/toolsnaps/generate_eval_criteria.json).
func TestGenerateEvalCriteriaSchemaSnapshot(t *testing.T) { checkToolSnap(t, "generate_eval_criteria") }

// TestGenerateEvalCriteriaSaysWhichKindAndWhy: a code task with tests is
// code (not writing), a landing site is build, and the result and its text
// say which words decided; a named kind says so.
func TestGenerateEvalCriteriaSaysWhichKindAndWhy(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	for _, call := range []struct{ args, kind, why string }{
		{`{"task":"Write fizzbuzz.py with tests","model":"sim"}`, "code", `guessed from "fizzbuzz.py" (a source file)`},
		{`{"task":"Build a one-page landing site","model":"sim"}`, "build", `guessed from "build a one-page landing site"`},
		{`{"task":"Build a one-page landing site","model":"sim","kind":"writing"}`, "writing", "named by the caller"},
	} {
		var out generateCriteriaResult
		res := callTool(t, c, "generate_eval_criteria", call.args)
		decode(t, res, &out)
		if out.Kind != call.kind || !strings.Contains(out.KindReason, call.why) {
			t.Errorf("%s: kind %q (%q), want %s (%s)", call.args, out.Kind, out.KindReason, call.kind, call.why)
		}
		if !strings.Contains(text(res), "Kind: "+call.kind+", "+call.why) {
			t.Errorf("%s: the text does not say the kind and why:\n%s", call.args, text(res))
		}
	}
}
