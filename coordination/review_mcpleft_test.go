package coordination_test

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools"
)

// TestAStepDrivenSessionsMCPServersCloseWhenAnotherReplicaEndsIt: replica A
// ran agent_a's first step (starting its MCP servers); the client's
// cancel_team reaches replica B (a load balancer, another process on the
// state directory). The session is over, yet A keeps the agent's stdio
// server running — holding the workspace and whatever the server holds —
// until A itself shuts down: nothing on A ever learns the session ended
// (not even A's sweep).
func TestAStepDrivenSessionsMCPServersCloseWhenAnotherReplicaEndsIt(t *testing.T) {
	bin := mcpServerBinary(t)
	p := &askMCP{}
	const spec = "claude_code/claude-opus-4-6"
	h, _ := fileHarness(t, map[string]providers.Provider{spec: p, "sim:seed=2": &coordtest.Scripted{}})
	t.Cleanup(h.Service.CancelAll)
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Agents: []coordination.Agent{
		{ID: "agent_a", Model: spec, Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"probe": {Type: tools.MCPStdio, Command: bin}}}},
		{ID: "agent_b", Model: "sim:seed=2"}}})
	ctx := context.Background()
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if n := processesOf(bin); n != 1 {
		t.Fatalf("%d servers run after the step landed; want its one", n)
	}
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
