package coordination_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools"
)

// steppedWithMCP creates a step-driven session whose agent_a has a stdio MCP
// server and steps agent_a once on h, which starts the server there.
func steppedWithMCP(t *testing.T, h *coordtest.Harness, bin string, rules coordination.Rules) *coordination.Session {
	t.Helper()
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Rules: rules, Agents: []coordination.Agent{
		{ID: "agent_a", Model: "claude_code/claude-opus-4-6", Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}},
		{ID: "agent_b", Model: "sim:seed=2"}}})
	if _, err := h.Service.Step(context.Background(), coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if n := processesOf(bin); n != 1 {
		t.Fatalf("%d servers run after the step landed; want its one", n)
	}
	return s
}

// TestAStepDrivenSessionsMCPServersCloseWhenAnotherReplicaEndsIt: replica A
// ran agent_a's first step (starting its MCP servers); the client's
// cancel_team reaches replica B (a load balancer, another process on the
// state directory). Nothing on A hears the end, so A's sweep closes the
// servers of the sessions it holds them for that read ended (before, the
// stdio server ran until A itself shut down).
func TestAStepDrivenSessionsMCPServersCloseWhenAnotherReplicaEndsIt(t *testing.T) {
	bin := mcpServerBinary(t)
	h, _ := fileHarness(t, map[string]providers.Provider{"claude_code/claude-opus-4-6": &askMCP{}, "sim:seed=2": &coordtest.Scripted{}})
	t.Cleanup(h.Service.CancelAll)
	s := steppedWithMCP(t, h, bin, coordination.Rules{})
	ctx := context.Background()
	other := coordination.NewService(h.Service.Store(), coordination.Options{})
	if _, err := other.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if res, _ := h.Service.Result(ctx, s.ID); res.Status != coordination.StatusCancelled {
		t.Fatalf("replica A reads the session %s", res.Status)
	}
	_ = h.Service.Sweep(ctx)
	waitProcesses(t, bin, 0)
}

// TestAStepDrivenSessionsMCPServersCloseWhenNoStepUsesThem: a session left
// running (its client gone, a long timeout) holds its servers only until no
// step has used them for half an hour; one used within that keeps them.
func TestAStepDrivenSessionsMCPServersCloseWhenNoStepUsesThem(t *testing.T) {
	bin := mcpServerBinary(t)
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	state := t.TempDir()
	h := &coordtest.Harness{T: t, Providers: map[string]providers.Provider{"claude_code/claude-opus-4-6": &askMCP{}, "sim:seed=2": &coordtest.Scripted{}}}
	h.Service = coordination.NewService(filestore.New(filepath.Join(state, "sessions")), coordination.Options{Open: h.Open, Parallel: 4, StateDir: state, Tooling: tooling.Builtin{}, Now: now})
	t.Cleanup(h.Service.CancelAll)
	steppedWithMCP(t, h, bin, coordination.Rules{TimeoutSeconds: 86400})
	ctx := context.Background()
	clock.Add(int64(29 * time.Minute))
	_ = h.Service.Sweep(ctx)
	if n := processesOf(bin); n != 1 {
		t.Fatalf("%d servers run after 29 idle minutes; want the session's one", n)
	}
	clock.Add(int64(2 * time.Minute))
	_ = h.Service.Sweep(ctx)
	waitProcesses(t, bin, 0)
}
