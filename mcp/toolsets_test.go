package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

func TestToolsListOffersWhatTheOperatorSelected(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  []string
	}{
		{nil, toolNames()},
		{[]string{"all"}, toolNames()},
		{[]string{"run"}, []string{"run_team", "team_status", "cancel_team", "apply_changes"}},
		{[]string{"host"}, []string{"start_team", "step", "finalize_team"}},
		{[]string{"review"}, []string{"generate_eval_criteria", "checkpoint"}},
		{[]string{"info"}, []string{"list_backends"}},
		{[]string{"run_team", "team_status"}, []string{"run_team", "team_status"}},
		{[]string{" host ", "list_backends", ""}, []string{"start_team", "step", "finalize_team", "list_backends"}},
		{[]string{"run", "run_team"}, []string{"run_team", "team_status", "cancel_team", "apply_changes"}},
	} {
		set, err := SelectTools(tc.items)
		if err != nil {
			t.Fatalf("%q: %v", tc.items, err)
		}
		var got []string
		for _, raw := range toolsListWire(t, newMemServer(t, Options{Tools: set})) {
			var tool struct{ Name string }
			_ = json.Unmarshal(raw, &tool)
			got = append(got, tool.Name)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("--tools %q lists %v, want %v", tc.items, got, want)
		}
	}
}

func TestAnUnknownToolOrGroupIsRefusedNamingTheValidOnes(t *testing.T) {
	_, err := SelectTools([]string{"run", "steps"})
	if err == nil {
		t.Fatal("steps was accepted")
	}
	for _, want := range []string{`"steps"`, "run (run_team, team_status, cancel_team, apply_changes)", "host (start_team, step, finalize_team)", "review (checkpoint, generate_eval_criteria)", "info (list_backends)", "all", "generate_eval_criteria, checkpoint"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s: %v", want, err)
		}
	}
}

func TestEveryToolIsInExactlyOneGroup(t *testing.T) {
	in := map[string]int{}
	for _, g := range toolGroups {
		for _, tool := range g.tools {
			in[tool]++
		}
	}
	for _, name := range toolNames() {
		if in[name] != 1 {
			t.Errorf("%s is in %d groups, want 1 (toolsets.go)", name, in[name])
		}
		delete(in, name)
	}
	for name := range in {
		t.Errorf("group member %s is no tool", name)
	}
}

// TestACallOfAToolLeftOutSaysSo: the operator's selection, not a typo, is
// why the tool is missing, and the error lists what is offered; a name
// nobody offers is mcp-go's "not found" as before.
func TestACallOfAToolLeftOutSaysSo(t *testing.T) {
	set, _ := SelectTools([]string{"run_team", "team_status"})
	s := newMemServer(t, Options{Tools: set})
	for _, tc := range []struct{ name, want string }{
		{"step", "this server does not offer step: its operator turned it off (serve --tools); the tools offered are run_team, team_status"},
		{"no_such_tool", "tool 'no_such_tool' not found"},
	} {
		req := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + tc.name + `","arguments":{"session_id":"s","agent_id":"a"}}}`
		resp, _ := json.Marshal(s.MCPServer().HandleMessage(context.Background(), json.RawMessage(req)))
		if !strings.Contains(string(resp), `"error"`) || !strings.Contains(string(resp), tc.want) {
			t.Errorf("calling %s: %s, want an error saying %q", tc.name, resp, tc.want)
		}
	}
	// The offered tools still work.
	c := inProcess(t, s, false)
	wantError(t, callTool(t, c, "team_status", `{"session_id":"nope"}`), "session_not_found")
}

func TestTheInstructionsAndPromptFollowTheSelection(t *testing.T) {
	set, _ := SelectTools([]string{"run"})
	c, err := inProcessInit(t, newMemServer(t, Options{Tools: set}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Instructions, "This server offers only these tools: run_team, team_status, cancel_team, apply_changes.") {
		t.Errorf("the instructions do not say which tools are offered:\n%s", c.Instructions)
	}
	all, err := inProcessInit(t, newMemServer(t, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(all.Instructions, "offers only") {
		t.Errorf("with every tool the instructions name a selection:\n%s", all.Instructions)
	}
	prompts, err := inProcess(t, newMemServer(t, Options{Tools: set}), true).ListPrompts(context.Background(), mcpgo.ListPromptsRequest{})
	if err != nil || len(prompts.Prompts) > 0 {
		t.Errorf("the team_run prompt walks through start_team and step, which are off: %v %+v", err, prompts)
	}
}

// inProcessInit is the initialize result an in-process legacy client gets.
func inProcessInit(t *testing.T, s *Server) (*mcpgo.InitializeResult, error) {
	t.Helper()
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcpgo.LATEST_LEGACY_PROTOCOL_VERSION + `","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	resp, err := json.Marshal(s.MCPServer().HandleMessage(context.Background(), json.RawMessage(req)))
	if err != nil {
		return nil, err
	}
	var out struct {
		Result mcpgo.InitializeResult `json:"result"`
	}
	return &out.Result, json.Unmarshal(resp, &out)
}
