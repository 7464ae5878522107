package coordination_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
)

// recordingTooling keeps what the core hands a Tooling, builds no toolbox
// and starts servers that only count their closing.
type recordingTooling struct {
	mu     sync.Mutex
	places []coordination.StepPlaces
	starts []coordination.AgentMCP
	closed int
}

type countedServers struct{ t *recordingTooling }

func (c countedServers) Close() error {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	c.t.closed++
	return nil
}

func (r *recordingTooling) Toolbox(_ context.Context, p coordination.StepPlaces) (providers.Toolbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.places = append(r.places, p)
	return nil, errors.New("this test builds no toolbox")
}

func (r *recordingTooling) StartMCP(_ context.Context, a coordination.AgentMCP) (coordination.MCPServers, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, a)
	return countedServers{r}, nil
}

// The core hands its Tooling plain data (the agent's settings, its live
// workspace, the contexts, the state directory to hide), starts an agent's
// servers once before the run's first step, lends them to its steps and
// closes them when the run ends.
func TestTheCoreHandsItsToolingPlainDataAndKeepsTheServersLifetimes(t *testing.T) {
	p := &offered{}
	h, state := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	rec := &recordingTooling{}
	h.Service = coordination.NewService(h.Service.Store(), coordination.Options{Open: h.Open, Parallel: 4, StateDir: state, Tooling: rec})
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	servers := map[string]coordination.MCPServer{"probe": {Type: "stdio", Command: "/bin/probe", Env: map[string]string{"TOKEN": "${PROBE_TOKEN}"}}}
	s := h.Create(coordination.TeamSpec{Rules: coordination.Rules{MaxRounds: 1}, Contexts: []workspace.Context{{Path: repo}},
		Agents: []coordination.Agent{{ID: "agent_a", Model: "sim:seed=1", Tools: &coordination.AgentTools{Network: true, MCPServers: servers}}}})
	h.Run(s.ID)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.starts) != 1 {
		t.Fatalf("the agent's servers started %d times; want once, before the first step", len(rec.starts))
	}
	a := rec.starts[0]
	if a.SessionID != s.ID || a.AgentID != "agent_a" || !a.Settings.Network || a.Settings.MCPServers["probe"].Env["TOKEN"] != "${PROBE_TOKEN}" {
		t.Errorf("StartMCP got %+v; want the session, the agent and its settings (secrets as references)", a)
	}
	if !strings.HasSuffix(a.Workspace, filepath.Join("agents", "agent_a", "workspace")) || len(a.Contexts) != 1 || a.Contexts[0].Name == "" {
		t.Errorf("StartMCP got workspace %q and contexts %+v; want the live workspace and the session's context", a.Workspace, a.Contexts)
	}
	if len(a.Hide) != 1 || a.Hide[0] != state {
		t.Errorf("StartMCP hides %q; want the state directory %q", a.Hide, state)
	}
	if len(rec.places) == 0 {
		t.Fatal("no step asked its Tooling for a toolbox")
	}
	pl := rec.places[0]
	if _, ok := pl.MCP.(countedServers); !ok || pl.Workspace != a.Workspace || len(pl.Hide) != 1 || pl.Hide[0] != state || len(pl.Contexts) != 1 {
		t.Errorf("Toolbox got %+v; want the running servers, the workspace, the context and the state directory hidden", pl)
	}
	if rec.closed != 1 {
		t.Errorf("the servers were closed %d times after the run; want once", rec.closed)
	}
	if len(p.reqs) == 0 || p.reqs[0].Toolbox == nil {
		t.Fatal("the step was given no toolbox to ask")
	}
}

// A Service without Tooling offers the workflow tools alone, even to a
// step with a workspace, and refuses to run a team whose agent has MCP
// servers rather than run it without them.
func TestWithoutToolingStepsGetNoToolsAndMCPServersAreRefused(t *testing.T) {
	p := &offered{}
	h, state := fileHarness(t, map[string]providers.Provider{"sim:seed=1": p})
	h.Service = coordination.NewService(h.Service.Store(), coordination.Options{Open: h.Open, Parallel: 4, StateDir: state})
	s := h.Create(coordination.TeamSpec{Models: []string{"sim:seed=1"}, Rules: coordination.Rules{MaxRounds: 1}})
	h.Run(s.ID)
	// The recorder is still given: a CLI agent records its own tools.
	if len(p.reqs) != 1 || p.reqs[0].Toolbox != nil || p.reqs[0].Record == nil {
		t.Fatalf("%d steps; want one, given no toolbox but a recorder", len(p.reqs))
	}
	withMCP := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{{ID: "agent_a", Model: "sim:seed=1",
		Tools: &coordination.AgentTools{MCPServers: map[string]coordination.MCPServer{"probe": {Type: "stdio", Command: "/bin/probe"}}}}}})
	_, err := h.Service.Run(context.Background(), withMCP.ID, nil)
	if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "agent_a's MCP servers did not start") || !strings.Contains(err.Error(), "without tools") {
		t.Fatalf("err %v; want the team refused, naming the agent and why", err)
	}
	if len(p.reqs) != 1 {
		t.Fatalf("%d steps ran for the refused team; want none", len(p.reqs)-1)
	}
}
