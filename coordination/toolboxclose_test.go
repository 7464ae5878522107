package coordination_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// closingTooling builds toolboxes that count their calls and their
// closing, and calls made after it.
type closingTooling struct {
	mu                         sync.Mutex
	built, closed, callsClosed int
}

type closingBox struct {
	t      *closingTooling
	closed bool
}

func (c *closingTooling) Toolbox(context.Context, coordination.StepPlaces) (providers.Toolbox, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.built++
	return &closingBox{t: c}, nil
}

func (c *closingTooling) StartMCP(context.Context, coordination.AgentMCP) (coordination.MCPServers, error) {
	return nil, nil
}

func (b *closingBox) Tools() []providers.Tool {
	return []providers.Tool{{Name: "run_command", Schema: json.RawMessage(`{"type":"object"}`)}}
}

func (b *closingBox) Call(context.Context, string, json.RawMessage) (providers.ToolResult, error) {
	b.t.mu.Lock()
	defer b.t.mu.Unlock()
	if b.closed {
		b.t.callsClosed++
	}
	return providers.ToolResult{Content: "ok"}, nil
}

func (b *closingBox) Close() error {
	b.t.mu.Lock()
	defer b.t.mu.Unlock()
	b.closed = true
	b.t.closed++
	return nil
}

// A step's toolbox holds what its commands share (providers/tools: the
// peers' trees, kept from one command to the next); the core closes it
// once the step's call is over, so those go with the step.
func TestAStepsToolboxIsClosedWhenItsCallEnds(t *testing.T) {
	p := &offered{}
	h, state := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	tooling := &closingTooling{}
	h.Service = coordination.NewService(h.Service.Store(), coordination.Options{Open: h.Open, Parallel: 4, StateDir: state, Tooling: tooling})
	s := h.Create(coordination.TeamSpec{Task: buildTask, Models: []string{"sim:seed=1"}, Rules: coordination.Rules{MaxRounds: 1}})
	h.Run(s.ID)
	tooling.mu.Lock()
	defer tooling.mu.Unlock()
	if tooling.built == 0 {
		t.Fatal("no step built its toolbox")
	}
	if tooling.closed != tooling.built || tooling.callsClosed != 0 {
		t.Errorf("%d toolboxes built, %d closed, %d calls after a close; want each closed once its step's call was over", tooling.built, tooling.closed, tooling.callsClosed)
	}
}
