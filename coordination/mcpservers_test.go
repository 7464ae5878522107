package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
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
	p, err := openai.NewResponses(providers.Endpoint{Backend: "openai", Model: "gpt-5-mini", BaseURL: srv.URL + "/v1", APIKey: "sk-test-mcp-not-a-key-0000", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	const spec = "openai/gpt-5-mini"
	h, _ := fileHarness(t, map[string]providers.Provider{spec: p})
	s := h.Create(coordination.TeamSpec{Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{{ID: "agent_a", Model: spec,
		Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}}}})
	script.Add("gpt-5-mini", toolCall("mcp__probe__echo", `{"text":"hello"}`), fake.Reply{Kind: fake.ReplyNewAnswer, Content: "the server said hello"})
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("result %+v", res)
	}
	calls := script.Calls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "echo: hello") {
		t.Fatalf("%d requests; want the server's answer sent back to the model", len(calls))
	}
	recs, err := h.Service.Store().(coordination.ToolLog).ToolLog(context.Background(), s.ID, "agent_a", 1)
	if err != nil || len(recs) != 1 || recs[0].Name != "mcp__probe__echo" || recs[0].IsError {
		t.Fatalf("tool log %+v, %v", recs, err)
	}
	waitProcesses(t, bin, 0)
}

func TestAnMCPServerThatFailsStopsTheTeamBeforeAnyStep(t *testing.T) {
	mcpServerBinary(t) // the sandbox is needed for stdio servers
	p := &offered{}
	h, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{{ID: "agent_a", Model: "sim:seed=1",
		Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"gone": {Type: tools.MCPStdio, Command: "/nonexistent/mcp-server"}}}}}})
	_, err := h.Service.Run(context.Background(), s.ID, nil)
	if err == nil || !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "agent_a's MCP servers did not start") || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("err %v; want a clear error naming the agent and the server", err)
	}
	if len(p.reqs) != 0 {
		t.Fatalf("%d steps ran; want none", len(p.reqs))
	}
	// Nothing runs it, so it must not read running: it read so for ever,
	// its claim taken back and no resumer taking it up.
	res, err := h.Service.Result(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordination.StatusCancelled || !strings.Contains(res.CancelReason, "not started") || !strings.Contains(res.CancelReason, "MCP servers did not start") {
		t.Errorf("after its failed start the session reads %s (%q); want cancelled, saying it was not started and why", res.Status, res.CancelReason)
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
	return coordtest.Answer("the server said: " + a.result.Content), providers.Free(), nil
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
	s := h.Create(coordination.TeamSpec{Rules: coordination.Rules{MaxRounds: 1}, Agents: []coordination.Agent{{ID: "agent_a", Model: spec,
		Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}}}})
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("result %+v", res)
	}
	if !slices.Contains(p.offered, "mcp__probe__echo") {
		t.Fatalf("the CLI agent's toolbox offered %v; want its server's mcp__probe__echo", p.offered)
	}
	if p.result.IsError || !strings.Contains(p.result.Content, "echo: from the CLI") {
		t.Fatalf("the server answered %+v", p.result)
	}
	recs, err := h.Service.Store().(coordination.ToolLog).ToolLog(context.Background(), s.ID, "agent_a", 1)
	if err != nil || len(recs) != 1 || recs[0].Name != "mcp__probe__echo" {
		t.Fatalf("tool log %+v, %v", recs, err)
	}
	waitProcesses(t, bin, 0)
}

// A session's MCP servers live as long as its run, not as long as a step:
// with the file store (which writes the result of every landing) each
// landing closed every server of the session, so a step in flight heard
// "MCP server probe is closed" and the next step started another server.
// Here agent_a asks its server for its boot id twice in every step, while
// its peers' steps land around it: one server, one boot id, the whole run.
func TestMCPServersOutliveTheStepsThatLandAroundThem(t *testing.T) {
	bin := mcpServerBinary(t)
	var mu sync.Mutex
	var boots []string
	boot := func(ctx context.Context, req *providers.Request) {
		res, err := providers.CallTool(ctx, req, providers.ToolCall{Name: "mcp__probe__boot", Args: json.RawMessage(`{}`)})
		mu.Lock()
		defer mu.Unlock()
		if err != nil || res.IsError {
			boots = append(boots, fmt.Sprintf("error: %v %s", err, res.Content))
			return
		}
		boots = append(boots, res.Content)
	}
	a := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		boot(ctx, &req)
		time.Sleep(100 * time.Millisecond) // the peers' steps land meanwhile
		boot(ctx, &req)
		if len(req.VoteEnum) > 0 && coordtest.HasTool(req, providers.ToolVote) {
			return coordtest.Vote(req.VoteEnum[0]), providers.Free(), nil
		}
		return coordtest.Answer("Answer: 4"), providers.Free(), nil
	})
	peer := func() *coordtest.Scripted { return &coordtest.Scripted{Replies: []any{coordtest.Answer("Answer: 4")}} }
	h, _ := fileHarness(t, map[string]providers.Provider{"sim:seed=1": a, "sim:seed=2": peer(), "sim:seed=3": peer()})
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{
		{ID: "agent_a", Model: "sim:seed=1", Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}},
		{ID: "agent_b", Model: "sim:seed=2"}, {ID: "agent_c", Model: "sim:seed=3"}}})
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(boots) < 4 {
		t.Fatalf("agent_a asked its server %d times; want two steps of two calls", len(boots))
	}
	for _, b := range boots {
		if b != boots[0] || strings.HasPrefix(b, "error") {
			t.Fatalf("agent_a's server across the run: %v; want one boot id throughout", boots)
		}
	}
	waitProcesses(t, bin, 0)
}

// A step-driven session's servers, started by its first server step, stay
// up between its steps and are closed when it ends without a run: cancelled
// (here, or elsewhere and then here), finalized, or the service shutting
// down.
func TestAStepDrivenSessionsMCPServersCloseWhenItEnds(t *testing.T) {
	bin := mcpServerBinary(t)
	for name, end := range map[string]func(svc *coordination.Service, id string) error{
		"cancel_team": func(svc *coordination.Service, id string) error {
			_, err := svc.Cancel(context.Background(), id)
			return err
		},
		"finalize_team": func(svc *coordination.Service, id string) error {
			_, err := svc.Finalize(context.Background(), id, "")
			return err
		},
		"cancelled by another process, then cancel_team here": func(svc *coordination.Service, id string) error {
			other := coordination.NewService(svc.Store(), coordination.Options{})
			if _, err := other.Cancel(context.Background(), id); err != nil {
				return err
			}
			_, err := svc.Cancel(context.Background(), id)
			return err
		},
		"shutdown": func(svc *coordination.Service, id string) error {
			svc.CancelAll()
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := &askMCP{}
			const spec = "claude_code/claude-opus-4-6"
			h, _ := fileHarness(t, map[string]providers.Provider{spec: p, "sim:seed=2": &coordtest.Scripted{}})
			s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Agents: []coordination.Agent{
				{ID: "agent_a", Model: spec, Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}},
				{ID: "agent_b", Model: "sim:seed=2"}}})
			ctx := context.Background()
			if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
				t.Fatal(err)
			}
			if p.result.IsError || !strings.Contains(p.result.Content, "echo: from the CLI") {
				t.Fatalf("the server answered %+v", p.result)
			}
			if n := processesOf(bin); n != 1 {
				t.Fatalf("%d servers run after the step landed; want its one, kept for the next step", n)
			}
			if err := end(h.Service, s.ID); err != nil {
				t.Fatal(err)
			}
			waitProcesses(t, bin, 0)
		})
	}
}

// The session timer (serve sweeps every few seconds) that ends a
// step-driven session past its timeout closes its MCP servers: no step
// lands to do it.
func TestTheSessionTimerClosesTheMCPServersOfTheSessionItEnds(t *testing.T) {
	bin := mcpServerBinary(t)
	p := &askMCP{}
	const spec = "claude_code/claude-opus-4-6"
	h, state := fileHarness(t, map[string]providers.Provider{spec: p, "sim:seed=2": &coordtest.Scripted{}})
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h.Service = coordination.NewService(h.Service.Store(), coordination.Options{Open: h.Open, Parallel: 4, StateDir: state, Now: clock, Tooling: tooling.Builtin{}})
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Rules: coordination.Rules{TimeoutSeconds: 60}, Agents: []coordination.Agent{
		{ID: "agent_a", Model: spec, Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}},
		{ID: "agent_b", Model: "sim:seed=2"}}})
	ctx := context.Background()
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if n := processesOf(bin); n != 1 {
		t.Fatalf("%d servers run after the step landed; want its one", n)
	}
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	if err := h.Service.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if res, _ := h.Service.Result(ctx, s.ID); res.Status != coordination.StatusFinished {
		t.Fatalf("past its timeout the session is %s", res.Status)
	}
	waitProcesses(t, bin, 0)
}
