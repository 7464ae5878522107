package coordination

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// closedServers are MCP servers already closed, as a step might find them.
type closedServers struct{}

func (closedServers) Close() error { return nil }

// failingStarts is a Tooling whose MCP servers never start: it names the
// agent's servers in its error, which shows a start was tried.
type failingStarts struct{}

func (failingStarts) Toolbox(context.Context, StepPlaces) (providers.Toolbox, error) {
	return nil, errors.New("no toolbox here")
}

func (failingStarts) StartMCP(_ context.Context, a AgentMCP) (MCPServers, error) {
	for name := range a.Settings.MCPServers {
		return nil, errors.New("MCP server " + name + " did not start")
	}
	return nil, errors.New("no servers")
}

// TestAStepThatFindsTheServersJustClosedStartsNewOnes: a step looked up
// its session's servers a moment before agentServers.close took them; once it gets
// them they are closed, and it must start the agent's servers again, not
// borrow the closed ones (their every call says "MCP server … is closed").
// The start here fails at once, which shows it was tried.
func TestAStepThatFindsTheServersJustClosedStartsNewOnes(t *testing.T) {
	svc := NewService(nil, Options{Tooling: failingStarts{}})
	s := &Session{ID: "t", Agents: []Agent{{ID: "a", Model: "sim", Tools: &AgentTools{NoSandbox: true,
		MCPServers: map[string]MCPServer{"gone": {Type: "stdio", Command: "/nonexistent/mcp-server"}}}}}}
	closing := &sessionMCP{agents: map[string]MCPServers{"a": closedServers{}}}
	svc.servers.running.Store(s.ID, closing)
	closing.mu.Lock() // agentServers.close holds it: taken out of the map, not yet marked
	type found struct {
		m   MCPServers
		err error
	}
	got := make(chan found, 1)
	go func() {
		m, err := svc.servers.agent(context.Background(), s, "a", svc.agentMCPPlaces)
		got <- found{m, err}
	}()
	time.Sleep(50 * time.Millisecond) // the step finds closing and waits for it
	svc.servers.running.Delete(s.ID)
	closing.closed = true
	closing.mu.Unlock()
	select {
	case f := <-got:
		if f.m != nil || f.err == nil || !strings.Contains(f.err.Error(), "gone") {
			t.Fatalf("agentMCP gave %v, %v; want a fresh start of a's servers (here failing on server gone)", f.m, f.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agentMCP never returned")
	}
}
