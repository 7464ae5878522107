package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
	"github.com/massgen-go/massgen-mcp/providers/tools"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

// mcpServerBinary builds providers/tools' small MCP server for this test.
func mcpServerBinary(t *testing.T) string {
	t.Helper()
	sandboxtest.Need(t) // a stdio server runs in the sandbox
	bin := filepath.Join(t.TempDir(), "mcpserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../providers/tools/testdata/mcpserver").CombinedOutput(); err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	return bin
}

// processesOf counts the host's processes running bin.
func processesOf(bin string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.HasPrefix(string(b), bin+"\x00") {
			n++
		}
	}
	return n
}

func waitProcesses(t *testing.T, bin string, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); processesOf(bin) != want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes run %s; want %d", processesOf(bin), bin, want)
		}
	}
}

// An API agent's MCP server (an operator's mcp_servers entry) starts with
// the run, serves the agent's steps as mcp__<server>__<tool> through the
// real SDK and the fake API, is recorded in tools.jsonl, and is closed when
// the session ends.
func TestAgentsMCPServerServesItsStepsAndClosesWithTheSession(t *testing.T) {
	bin := mcpServerBinary(t)
	script := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(script))
	t.Cleanup(srv.Close)
	p, err := openai.NewResponses(providers.Endpoint{Backend: "openai", Model: "gpt-5-mini", BaseURL: srv.URL + "/v1", APIKey: "sk-test-mcp-0000", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	const spec = "openai/gpt-5-mini"
	h, _ := fileHarness(t, map[string]providers.Provider{spec: p})
	s := h.create(coordination.TeamSpec{Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{{ID: "agent_a", Model: spec,
		Tools: &coordination.AgentTools{MCPServers: map[string]tools.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}}}})
	script.Add("gpt-5-mini", toolCall("mcp__probe__echo", `{"text":"hello"}`), fake.Reply{Kind: fake.ReplyNewAnswer, Content: "the server said hello"})
	res := h.run(s.ID)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("result %+v", res)
	}
	calls := script.Calls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "echo: hello") {
		t.Fatalf("%d requests; want the server's answer sent back to the model", len(calls))
	}
	recs, err := h.svc.Store().(coordination.ToolLog).ToolLog(context.Background(), s.ID, "agent_a", 1)
	if err != nil || len(recs) != 1 || recs[0].Name != "mcp__probe__echo" || recs[0].IsError {
		t.Fatalf("tool log %+v, %v", recs, err)
	}
	waitProcesses(t, bin, 0)
}

func TestAnMCPServerThatFailsStopsTheTeamBeforeAnyStep(t *testing.T) {
	mcpServerBinary(t) // the sandbox is needed for stdio servers
	p := &offered{}
	h, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	s := h.create(coordination.TeamSpec{Agents: []coordination.Agent{{ID: "agent_a", Model: "sim:seed=1",
		Tools: &coordination.AgentTools{MCPServers: map[string]tools.MCPServer{"gone": {Type: tools.MCPStdio, Command: "/nonexistent/mcp-server"}}}}}})
	_, err := h.svc.Run(context.Background(), s.ID, nil)
	if err == nil || !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "agent_a's MCP servers did not start") || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("err %v; want a clear error naming the agent and the server", err)
	}
	if len(p.reqs) != 0 {
		t.Fatalf("%d steps ran; want none", len(p.reqs))
	}
}

// askMCP is a CLI agent stand-in: its step calls an MCP tool through the
// request's toolbox, as cliagent's workflow server does for the CLI, and
// answers with what the tool returned.
type askMCP struct {
	offered []string
	result  providers.ToolResult
}

func (a *askMCP) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	if req.Toolbox != nil {
		for _, t := range req.Toolbox.Tools() {
			a.offered = append(a.offered, t.Name)
		}
		res, err := providers.CallTool(ctx, &req, providers.ToolCall{Name: "mcp__probe__echo", Args: json.RawMessage(`{"text":"from the CLI"}`)})
		if err != nil {
			return providers.Action{}, providers.Usage{}, err
		}
		a.result = res
	}
	return answer("the server said: " + a.result.Content), providers.Free(), nil
}

// A CLI agent's MCP servers start with the run like an API agent's, and its
// steps carry them in the toolbox (cliagent serves them to the CLI through
// the workflow server); the call is recorded in tools.jsonl, and the server
// is closed when the session ends.
func TestACLIAgentsMCPServersServeItsStepsThroughTheToolbox(t *testing.T) {
	bin := mcpServerBinary(t)
	p := &askMCP{}
	const spec = "claude_code/claude-opus-4-6"
	h, _ := fileHarness(t, map[string]providers.Provider{spec: p})
	s := h.create(coordination.TeamSpec{Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{{ID: "agent_a", Model: spec,
		Tools: &coordination.AgentTools{MCPServers: map[string]tools.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}}}})
	res := h.run(s.ID)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("result %+v", res)
	}
	if !slices.Contains(p.offered, "mcp__probe__echo") {
		t.Fatalf("the CLI agent's toolbox offered %v; want its server's mcp__probe__echo", p.offered)
	}
	if p.result.IsError || !strings.Contains(p.result.Content, "echo: from the CLI") {
		t.Fatalf("the server answered %+v", p.result)
	}
	recs, err := h.svc.Store().(coordination.ToolLog).ToolLog(context.Background(), s.ID, "agent_a", 1)
	if err != nil || len(recs) != 1 || recs[0].Name != "mcp__probe__echo" {
		t.Fatalf("tool log %+v, %v", recs, err)
	}
	waitProcesses(t, bin, 0)
}
