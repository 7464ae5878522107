package coordination_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/anthropic"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

// plantedRepo copies the planted-bug project (add subtracts; sh test.sh
// fails) to a directory named calc, the context's name in prompts and tools.
func plantedRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "calc")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"add.sh", "test.sh", "README.md"} {
		data, err := os.ReadFile(filepath.Join("testdata", "plantedbug", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

func projectTests(t *testing.T, repo string) (string, bool) {
	t.Helper()
	cmd := exec.Command("sh", "test.sh")
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

func toolCall(tool, input string) fake.Reply {
	return fake.Reply{Kind: fake.ReplyToolCall, Tool: tool, Input: json.RawMessage(input)}
}

// A team of API agents, each through its real SDK against the fake APIs,
// fixes a planted bug in a context repository with the built-in tools: they
// read the context, search it, edit their workspaces, run the project's
// tests in the sandbox and answer; the team votes, and the winner's diff is
// applied to the repository, whose tests then pass.
func TestAPITeamFixesAPlantedBugWithTools(t *testing.T) {
	sandboxtest.Need(t) // the tests run through run_command
	repo := plantedRepo(t)
	if _, ok := projectTests(t, repo); ok {
		t.Fatal("the planted bug is not there: the project's tests pass before the team ran")
	}
	script := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(script))
	t.Cleanup(srv.Close)
	const gpt, claude = "openai/gpt-5-mini", "claude/claude-haiku-4-5"
	resp, err := openai.NewResponses(providers.Endpoint{Backend: "openai", Model: "gpt-5-mini", BaseURL: srv.URL + "/v1", APIKey: "sk-test-planted-not-a-key-0000", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := anthropic.New(providers.Endpoint{Backend: "claude", Model: "claude-haiku-4-5", BaseURL: srv.URL, APIKey: "dummy-planted-bug-key", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := fileHarness(t, map[string]providers.Provider{gpt: resp, claude: msgs})
	s := h.Create(coordination.TeamSpec{Task: "Fix the bug that makes the project's tests fail.", Models: []string{gpt, claude},
		Contexts: []workspace.Context{{Path: repo, Permission: workspace.Write}}})
	fixer := coordtest.Alias(s, "agent_a")
	script.Add("gpt-5-mini",
		toolCall("read_file", `{"path":"context/calc/add.sh"}`),
		toolCall("search", `{"pattern":"\\$1 - \\$2","path":"context/calc"}`),
		toolCall("edit_file", `{"path":"add.sh","old_text":"$1 - $2","new_text":"$1 + $2"}`),
		toolCall("run_command", `{"command":"sh test.sh"}`),
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "add subtracted its arguments; it adds them now, and sh test.sh passes."},
		fake.Reply{Kind: fake.ReplyVote, Agent: fixer, Reason: "the tests pass"})
	script.Add("claude-haiku-4-5",
		toolCall("list_files", `{"path":"context/calc"}`),
		toolCall("run_command", `{"command":"sh test.sh"}`),
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "The tests fail: add 2 3 gives -1."},
		fake.Reply{Kind: fake.ReplyVote, Agent: fixer, Reason: "it fixes the bug and the tests pass"})

	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || res.Winner == nil || res.Winner.AgentID != "agent_a" {
		t.Fatalf("result %+v; want agent_a's fix to win", res)
	}
	// The fix waits for the user's approval (apply.go), then goes in whole.
	if !res.ChangesPending || res.Changes == nil || !slices.ContainsFunc(res.Changes.Files, func(f workspace.FileChange) bool { return f.Path == "add.sh" }) {
		t.Fatalf("changes %+v (pending %v); want the winner's add.sh listed, not yet written", res.Changes, res.ChangesPending)
	}
	ap, err := h.Service.ApplyChanges(context.Background(), s.ID, coordination.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ap.Applied == nil || !slices.ContainsFunc(ap.Applied.Written, func(f workspace.Change) bool { return f.Path == "add.sh" }) {
		t.Fatalf("applied %+v; want the winner's add.sh written to the repository", ap.Applied)
	}
	if out, ok := projectTests(t, repo); !ok || !strings.Contains(out, "PASS") {
		t.Fatalf("after the team, the project's tests say %q; want them to pass", out)
	}

	// What each model saw: the sandboxed test run's real output.
	outputs := map[string]string{}
	for _, c := range script.Calls() {
		outputs[c.Model] += string(c.Body)
	}
	if !strings.Contains(outputs["gpt-5-mini"], "PASS") {
		t.Error("agent_a never saw its tests pass")
	}
	if !strings.Contains(outputs["claude-haiku-4-5"], "FAIL: add 2 3 = -1") {
		t.Error("agent_b never saw the tests fail")
	}

	// Each step's tool calls are in its tools.jsonl.
	log, ok := h.Service.Store().(coordination.ToolLog)
	if !ok {
		t.Fatal("the file store keeps no tool log")
	}
	recs, err := log.ToolLog(context.Background(), s.ID, "agent_a", 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Name)
		if r.Kind != "tool" || r.Started.IsZero() || r.ResultBytes == 0 {
			t.Errorf("record %+v lacks its kind, time or result size", r)
		}
	}
	if !slices.Equal(names, []string{"read_file", "search", "edit_file", "run_command"}) {
		t.Fatalf("agent_a's step 1 recorded %v", names)
	}
	if _, err := os.Stat(filepath.Join(coordination.DirOf(h.Service.Store(), s.ID), "agents", "agent_a", "001", "tools.jsonl")); err != nil {
		t.Fatalf("no tools.jsonl beside the step's answer: %v", err)
	}
	if recs, _ := log.ToolLog(context.Background(), s.ID, "agent_a", 2); len(recs) != 0 {
		t.Fatalf("the vote step recorded %v; it made no tool call", recs)
	}
}

// offered is a provider that answers at once and keeps the tools each
// request offered, and the request.
type offered struct {
	reqs []providers.Request
}

func (o *offered) Step(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	o.reqs = append(o.reqs, req)
	if req.Toolbox != nil {
		if res, err := req.Toolbox.Call(context.Background(), "run_command", json.RawMessage(`{"command":"true"}`)); err == nil {
			req.RecordTool(providers.ToolRecord{Kind: "tool", Name: "run_command", ResultBytes: len(res.Content),
				Arguments: json.RawMessage(`{"command":"echo sk-dummy-recorded-not-a-key-0000"}`)})
		}
	}
	return coordtest.Answer("done"), providers.Free(), nil
}

func TestStepsCarryTheRulesToolLimitAndTheAgentsToolSettings(t *testing.T) {
	p := &offered{}
	h, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	maxCalls := 7
	spec := coordination.TeamSpec{Task: buildTask, Models: []string{"sim:seed=1"}, Rules: coordination.Rules{MaxToolCallsPerStep: maxCalls, MaxRounds: 1}}
	s := h.Create(spec)
	h.Run(s.ID)
	if len(p.reqs) == 0 {
		t.Fatal("no step ran")
	}
	req := p.reqs[0]
	if req.Toolbox == nil || req.MaxToolCalls != maxCalls || req.Record == nil {
		t.Fatalf("request toolbox %v, max %d; want a toolbox bound to the workspace and the rule's limit", req.Toolbox, req.MaxToolCalls)
	}
	var names []string
	for _, tl := range req.Toolbox.Tools() {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"list_files", "read_file", "write_file", "edit_file", "search"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}
	recs, err := h.Service.Store().(coordination.ToolLog).ToolLog(context.Background(), s.ID, "agent_a", 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("tool log %v, %v; want the one call", recs, err)
	}
	if strings.Contains(string(recs[0].Arguments), "recorded-not-a-key") || !strings.Contains(string(recs[0].Arguments), "sk-[redacted]") {
		t.Fatalf("the tool log keeps a key-shaped secret: %s", recs[0].Arguments)
	}
}

func TestAgentToolSettingsFilterTheToolbox(t *testing.T) {
	p := &offered{}
	h, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	s := h.Create(coordination.TeamSpec{Task: buildTask, Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{{ID: "agent_a", Model: "sim:seed=1",
		Tools: &coordination.AgentTools{Excluded: []string{"write_file"}, WebSearch: true}}}})
	h.Run(s.ID)
	req := p.reqs[0]
	if !req.WebSearch {
		t.Fatal("web_search: true did not reach the request")
	}
	for _, tl := range req.Toolbox.Tools() {
		if tl.Name == "write_file" {
			t.Fatal("an excluded tool is offered")
		}
	}
	if res, _ := req.Toolbox.Call(context.Background(), "write_file", json.RawMessage(`{"path":"x","content":"y"}`)); !res.IsError {
		t.Fatalf("an excluded tool ran: %+v", res)
	}
	p2 := &offered{}
	h2, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p2})
	s2 := h2.Create(coordination.TeamSpec{Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{{ID: "agent_a", Model: "sim:seed=1",
		Tools: &coordination.AgentTools{Allowed: []string{"read_file"}}}}})
	h2.Run(s2.ID)
	if got := p2.reqs[0].Toolbox.Tools(); len(got) != 1 || got[0].Name != "read_file" {
		t.Fatalf("allowed_tools [read_file] offers %v", got)
	}
}

func TestSessionsWithoutFilesGetNoToolbox(t *testing.T) {
	p := &offered{}
	h := coordtest.New(t, map[string]providers.Provider{"sim:seed=1": p})
	s := h.Create(coordination.TeamSpec{Models: []string{"sim:seed=1"}, Rules: coordination.Rules{MaxRounds: 1}})
	h.Run(s.ID)
	if p.reqs[0].Toolbox != nil {
		t.Fatal("a session with no workspace, context or peers was given tools")
	}
}

func TestMaxToolCallsPerStepIsValidated(t *testing.T) {
	for _, n := range []int{-1, coordination.MaxToolCallsLimit + 1} {
		if _, err := (coordination.Rules{MaxToolCallsPerStep: n}).Normalize(); err == nil || !strings.Contains(err.Error(), "max_tool_calls_per_step") {
			t.Errorf("max_tool_calls_per_step %d: %v; want it refused by name", n, err)
		}
	}
	r, err := coordination.Rules{}.Normalize()
	if err != nil || r.MaxToolCallsPerStep != providers.DefaultMaxToolCalls {
		t.Fatalf("default %d, %v; want %d", r.MaxToolCallsPerStep, err, providers.DefaultMaxToolCalls)
	}
}

func TestToolLogsRoundTripInEveryStore(t *testing.T) {
	for name, st := range map[string]coordination.Store{"memstore": memstore.New(), "filestore": filestore.New(t.TempDir())} {
		t.Run(name, func(t *testing.T) {
			svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
			ctx := context.Background()
			s, err := svc.Create(ctx, coordination.TeamSpec{Task: "t", Agents: []coordination.Agent{{ID: "agent_a", Model: "sim"}}})
			if err != nil {
				t.Fatal(err)
			}
			log := st.(coordination.ToolLog)
			rec := providers.ToolRecord{Kind: "tool", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`), ResultBytes: 3}
			if err := log.WriteToolLog(ctx, s.ID, "agent_a", 1, []providers.ToolRecord{rec}); err == nil {
				t.Fatal("a tool log was written for a step that never landed")
			}
			lock, err := st.LockStep(ctx, s.ID, "agent_a")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lock.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "x"}); err != nil {
				t.Fatal(err)
			}
			lock.Release()
			if err := log.WriteToolLog(ctx, s.ID, "agent_a", 1, []providers.ToolRecord{rec, rec}); err != nil {
				t.Fatal(err)
			}
			got, err := log.ToolLog(ctx, s.ID, "agent_a", 1)
			if err != nil || len(got) != 2 || got[1].Name != "read_file" || string(got[1].Arguments) != `{"path":"a"}` {
				t.Fatalf("read back %+v, %v", got, err)
			}
		})
	}
}
