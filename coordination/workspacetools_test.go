package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/providers"
)

// buildTask is a task whose kind (criteria.Classify: build) makes files, so
// its steps are offered the workspace tools.
const buildTask = "Build a landing page for my bakery."

// hasFiles says whether a request's new_answer takes files.
func hasFiles(req providers.Request) bool {
	for _, tl := range req.Tools {
		if tl.Name == providers.ToolNewAnswer {
			return strings.Contains(string(tl.Schema), `"files"`)
		}
	}
	return false
}

func TestAQuestionIsOfferedNoWorkspaceTools(t *testing.T) {
	p := &offered{}
	h, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	s := h.Create(coordination.TeamSpec{Task: "What is the capital of France? Answer in one word. Be sure.", Models: []string{"sim:seed=1"}, Rules: coordination.Rules{MaxRounds: 1}})
	res := h.Run(s.ID)
	if p.reqs[0].Toolbox != nil {
		t.Fatalf("a question's step was offered %d tools", len(p.reqs[0].Toolbox.Tools()))
	}
	if hasFiles(p.reqs[0]) {
		t.Fatal("a question's new_answer takes files it has no use for")
	}
	if want := "off (a question with no context)"; res.WorkspaceTools != want {
		t.Fatalf("the result says workspace_tools %q; want %q", res.WorkspaceTools, want)
	}
	st, err := h.Service.Store().Session(context.Background(), s.ID)
	if err != nil || st.WorkspaceTools == nil || st.WorkspaceTools.On {
		t.Fatalf("session.json keeps %+v, %v; want the decision off", st.WorkspaceTools, err)
	}
}

func TestABuildTaskIsOfferedTheWorkspaceTools(t *testing.T) {
	p := &offered{}
	h, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	s := h.Create(coordination.TeamSpec{Task: buildTask, Models: []string{"sim:seed=1"}, Rules: coordination.Rules{MaxRounds: 1}})
	res := h.Run(s.ID)
	if p.reqs[0].Toolbox == nil || len(p.reqs[0].Toolbox.Tools()) < 5 {
		t.Fatal("a build task's step was not offered the workspace tools")
	}
	if !hasFiles(p.reqs[0]) {
		t.Fatal("a build task's new_answer takes no files")
	}
	if !strings.HasPrefix(res.WorkspaceTools, "on (a build task, guessed from ") {
		t.Fatalf("the result says workspace_tools %q", res.WorkspaceTools)
	}
}

// TestTheTeamFileOrTheOperatorDecidesTheWorkspaceTools: a team file whose
// allowed_tools names a workspace tool, and the operator's setting, each
// turn them on for a question; the operator's off turns them off for a build
// task.
func TestTheTeamFileOrTheOperatorDecidesTheWorkspaceTools(t *testing.T) {
	question := "What is 2+2? Answer with a number. Nothing else."
	for _, c := range []struct {
		name, task, operator string
		tools                *coordination.AgentTools
		on                   bool
		why                  string
	}{
		{"team file", question, "", &coordination.AgentTools{Allowed: []string{"read_file"}}, true, "the team file allows read_file to agent_a"},
		{"operator on", question, coordination.WorkspaceToolsOn, nil, true, "the operator's setting"},
		{"operator off", buildTask, coordination.WorkspaceToolsOff, nil, false, "the operator's setting"},
		{"operator auto", question, coordination.WorkspaceToolsAuto, nil, false, "a question with no context"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &offered{}
			h, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
			opts := coordination.Options{Open: h.Open, Parallel: 4, Tooling: tooling.Builtin{}, WorkspaceTools: c.operator}
			h.Service = coordination.NewService(filestore.New(t.TempDir()), opts)
			s := h.Create(coordination.TeamSpec{Task: c.task, Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{{ID: "agent_a", Model: "sim:seed=1", Tools: c.tools}}})
			h.Run(s.ID)
			if got := p.reqs[0].Toolbox != nil; got != c.on {
				t.Fatalf("toolbox offered %v; want %v", got, c.on)
			}
			if s.WorkspaceTools == nil || s.WorkspaceTools.On != c.on || s.WorkspaceTools.Why != c.why {
				t.Fatalf("decided %+v; want on %v (%s)", s.WorkspaceTools, c.on, c.why)
			}
		})
	}
}

func TestABadOperatorSettingRefusesTheSession(t *testing.T) {
	h := coordtest.NewWith(t, map[string]providers.Provider{"sim:seed=1": &offered{}}, coordination.Options{WorkspaceTools: "sometimes"})
	_, err := h.Service.Create(context.Background(), coordination.TeamSpec{Task: "t", Models: []string{"sim:seed=1"}})
	if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), `"sometimes" is not one of auto, on, off`) {
		t.Fatalf("a bad setting gave %v", err)
	}
}

// TestTheDecisionHoldsAcrossResumes: a session decided off stays off when a
// server set to on runs it, and one written before there was a decision
// offers the tools wherever a step has a place, as it did.
func TestTheDecisionHoldsAcrossResumes(t *testing.T) {
	dir := t.TempDir()
	st := filestore.New(dir)
	first := &coordtest.Harness{T: t, Providers: map[string]providers.Provider{"sim:seed=1": &offered{}}}
	first.Service = coordination.NewService(st, coordination.Options{Open: first.Open, Tooling: tooling.Builtin{}})
	s := first.Create(coordination.TeamSpec{Task: "What is the capital of Peru? Say it in a word. Be brief.", Models: []string{"sim:seed=1"}, Rules: coordination.Rules{MaxRounds: 1}})
	old := first.Create(coordination.TeamSpec{Task: "What is the capital of Peru? Say it in a word. Be brief.", Models: []string{"sim:seed=1"}, Rules: coordination.Rules{MaxRounds: 1}})
	// old: as a server before the decision wrote it, without workspace_tools.
	path := filepath.Join(coordination.DirOf(st, old.ID), "session.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["workspace_tools"]; !ok {
		t.Fatalf("session.json has no workspace_tools: %s", raw)
	}
	delete(m, "workspace_tools")
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	p := &offered{}
	later := &coordtest.Harness{T: t, Providers: map[string]providers.Provider{"sim:seed=1": p}}
	later.Service = coordination.NewService(filestore.New(dir), coordination.Options{Open: later.Open, Tooling: tooling.Builtin{}, WorkspaceTools: coordination.WorkspaceToolsOn})
	if res := later.Run(s.ID); p.reqs[0].Toolbox != nil || res.WorkspaceTools != "off (a question with no context)" {
		t.Fatalf("resumed under an operator's on, the session decided off was offered tools %v (%q)", p.reqs[0].Toolbox != nil, res.WorkspaceTools)
	}
	p.reqs = nil
	if res := later.Run(old.ID); p.reqs[0].Toolbox == nil || res.WorkspaceTools != "" {
		t.Fatalf("a session written before the decision: toolbox %v, workspace_tools %q; want its tools as before and nothing said", p.reqs[0].Toolbox != nil, res.WorkspaceTools)
	}
}
