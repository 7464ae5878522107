package coordination

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers/tools"
)

// TestAStepThatFindsTheServersJustClosedStartsNewOnes: a step looked up
// its session's servers a moment before closeMCP took them; once it gets
// them they are closed, and it must start the agent's servers again, not
// borrow the closed ones (their every call says "MCP server … is closed").
// The start here fails at once (no such command), which shows it was tried.
func TestAStepThatFindsTheServersJustClosedStartsNewOnes(t *testing.T) {
	svc := NewService(nil, Options{})
	s := &Session{ID: "t", Agents: []Agent{{ID: "a", Model: "sim", Tools: &AgentTools{NoSandbox: true,
		MCPServers: map[string]tools.MCPServer{"gone": {Type: tools.MCPStdio, Command: "/nonexistent/mcp-server"}}}}}}
	closing := &sessionMCP{agents: map[string]*tools.MCP{"a": {}}}
	svc.mcps.Store(s.ID, closing)
	closing.mu.Lock() // closeMCP holds it: taken out of the map, not yet marked
	type found struct {
		m   *tools.MCP
		err error
	}
	got := make(chan found, 1)
	go func() {
		m, err := svc.agentMCP(context.Background(), s, "a")
		got <- found{m, err}
	}()
	time.Sleep(50 * time.Millisecond) // the step finds closing and waits for it
	svc.mcps.Delete(s.ID)
	closing.closed = true
	closing.mu.Unlock()
	select {
	case f := <-got:
		if f.m == closing.agents["a"] || f.err == nil || !strings.Contains(f.err.Error(), "gone") {
			t.Fatalf("agentMCP gave %p, %v; want a fresh start of a's servers (here failing on server gone)", f.m, f.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agentMCP never returned")
	}
}
