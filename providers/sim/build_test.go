package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

type answerArgs struct {
	Content string                 `json:"content"`
	Files   []providers.AnswerFile `json:"files"`
}

func stepArgs(t *testing.T, p providers.Provider, req providers.Request) (providers.ToolCall, answerArgs) {
	t.Helper()
	act, _, err := p.Step(context.Background(), req)
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("step: %v %+v", err, act)
	}
	var a answerArgs
	json.Unmarshal(act.Calls[0].Args, &a)
	return act.Calls[0], a
}

func TestBuildTasksAreRecognised(t *testing.T) {
	for task, want := range map[string]buildKind{
		"Build a one-page landing site for a bakery":       buildSite,
		"Create a website for my dentist practice":         buildSite,
		"Write a Python function that reverses a string":   buildPython,
		"Implement a module that parses dates, with tests": buildPython,
		"What is 17 * 23?":                  buildNone,
		"Write a haiku about the Go gopher": buildNone,
		"What is the capital of Australia?": buildNone,
	} {
		if got := buildTaskKind(task); got != want {
			t.Errorf("%q: kind %d, want %d", task, got, want)
		}
	}
	if s := subject("Build a one-page landing site for a bakery"); s != "bakery" {
		t.Errorf("subject %q", s)
	}
}

func TestSimWritesASiteOnlyWhenItHasAWorkspace(t *testing.T) {
	p := mustSim(t, "sim/strong")
	req := providers.Request{Task: "Build a one-page landing site for a bakery", AgentID: "agent_a", Self: "agent1", StepNumber: 1,
		Tools: tools(true, false), SessionSeed: 1, Workspace: "/ws"}
	call, a := stepArgs(t, p, req)
	if call.Name != providers.ToolNewAnswer || len(a.Files) != 2 || a.Files[0].Path != "index.html" || !strings.Contains(a.Files[0].Content, "<h1>Bakery</h1>") {
		t.Fatalf("answer %+v", a)
	}
	if !strings.Contains(a.Content, "index.html") {
		t.Fatalf("the answer does not say where the site is: %q", a.Content)
	}
	again, b := stepArgs(t, p, req)
	if string(again.Args) != string(call.Args) || len(b.Files) != 2 {
		t.Fatal("the same view gave different files")
	}
	req.Workspace = ""
	if _, a := stepArgs(t, p, req); len(a.Files) != 0 {
		t.Fatal("a sim without a workspace delivered files")
	}
}

func TestSimWritesAPythonModuleWithItsTest(t *testing.T) {
	p := mustSim(t, "sim:accuracy=1")
	req := providers.Request{Task: "Write a Python function that reverses a string", AgentID: "agent_a", Self: "agent1", StepNumber: 1,
		Tools: tools(true, false), SessionSeed: 4, Workspace: "/ws"}
	_, a := stepArgs(t, p, req)
	if len(a.Files) != 2 || a.Files[0].Path != "solution.py" || a.Files[1].Path != "test_solution.py" || !strings.Contains(a.Files[1].Content, "def test_") {
		t.Fatalf("files %+v", a.Files)
	}
}

func TestSimVotesForTheMostCompleteFiles(t *testing.T) {
	p := mustSim(t, "sim")
	full := sitePage("bakery", siteSections)
	partial := sitePage("bakery", siteSections[:3])
	shown := []providers.ShownAnswer{
		{Alias: "agent1", Label: "agent1.1", Content: "site", Files: []providers.FileInfo{{Path: "index.html", Content: partial}}},
		{Alias: "agent2", Label: "agent2.1", Content: "site", Files: []providers.FileInfo{{Path: "index.html", Content: full}}},
		{Alias: "agent3", Label: "agent3.1", Content: "site", Files: []providers.FileInfo{{Path: "index.html", Content: full}}},
	}
	req := providers.Request{Task: "Build a one-page landing site for a bakery", AgentID: "agent_c", Self: "agent3", StepNumber: 2,
		Tools: tools(true, true), Shown: shown, VoteEnum: []string{"agent1", "agent2", "agent3"}, SessionSeed: 1, Workspace: "/ws"}
	call, _ := stepArgs(t, p, req)
	var v struct {
		AgentID string `json:"agent_id"`
	}
	json.Unmarshal(call.Args, &v)
	if call.Name != providers.ToolVote || v.AgentID != "agent2" {
		t.Fatalf("voted %s %s; want agent2, the lowest-numbered complete site", call.Name, call.Args)
	}
	// No complete site shown: it writes one.
	req.Shown = shown[:1]
	req.VoteEnum = []string{"agent1"}
	if call, a := stepArgs(t, p, req); call.Name != providers.ToolNewAnswer || !strings.Contains(a.Files[0].Content, `id="contact"`) {
		t.Fatalf("no complete site shown, yet %s %+v", call.Name, a)
	}
}
