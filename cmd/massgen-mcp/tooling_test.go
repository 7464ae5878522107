package main

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Every service the binary builds (run, serve, serve --memory, every
// tenant) is given the tools (coordination/tooling): without them its steps
// would offer the workflow tools alone and refuse an agent's MCP servers.
// The server here cannot start, and only the tools' attempt names it.
func TestEveryServiceTheBinaryBuildsHasTheTools(t *testing.T) {
	services := binaryServices(t)
	ctx := context.Background()
	for name, svc := range services {
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Agents: []coordination.Agent{
			{ID: "agent_a", Model: "sim/strong", Tools: &coordination.AgentTools{NoSandbox: true,
				MCPServers: map[string]coordination.MCPServer{"gone": {Type: "stdio", Command: "/nonexistent/mcp-server"}}}},
			{ID: "agent_b", Model: "sim"}}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		if err == nil || !strings.Contains(err.Error(), "gone") {
			t.Errorf("%s: step gave %v; want the agent's MCP server tried by the tools (and failing on server gone)", name, err)
		}
	}
}
