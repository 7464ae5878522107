package coordination

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/providers"
)

// sessionMCP holds the MCP servers of one session's agents, started once
// (before the run's first step, or lazily by the first server step of a
// step-driven session or of a resume) and reused by every step, closed when
// the run ends or the session finishes.
type sessionMCP struct {
	mu     sync.Mutex
	agents map[string]MCPServers
	closed bool      // by close: a step that found it a moment before starts a new one
	used   time.Time // when a step (or a run's start) last took them: the sweep closes servers unused since its look
}

// agentServers holds the agents' running MCP servers by session: started
// through the Tooling, closed when a run ends, a session finishes or the
// service shuts down, and by the sweep when the session ended elsewhere or
// no step has used them for mcpIdleMax (timer.go).
type agentServers struct {
	running sync.Map // id → *sessionMCP
	tooling Tooling  // nil: no agent's servers can start
	log     zerolog.Logger
	now     func() time.Time
}

// placer says where an agent's stdio servers run (Service.agentMCPPlaces).
type placer func(s *Session, agent string, set AgentTools) AgentMCP

// errNoTooling is why an agent's MCP servers cannot start on a Service
// built without Tooling.
var errNoTooling = errors.New("this server was built without tools (no Options.Tooling), so it cannot start MCP servers")

// hasMCP says whether any agent of the session has MCP servers.
func hasMCP(s *Session) bool {
	for _, a := range s.Agents {
		if a.Tools != nil && len(a.Tools.MCPServers) > 0 {
			return true
		}
	}
	return false
}

// start starts the MCP servers of every agent of the session that has
// some and whose servers are not running: a server that fails is an error
// naming the agent, before any step.
func (as *agentServers) start(ctx context.Context, s *Session, place placer) error {
	if !hasMCP(s) {
		return nil
	}
	for _, a := range s.Agents {
		if _, err := as.agent(ctx, s, a.ID, place); err != nil {
			return err
		}
	}
	return nil
}

// agent returns the agent's running MCP servers, starting them if they
// are not (nil when the agent has none).
func (as *agentServers) agent(ctx context.Context, s *Session, agent string, place placer) (MCPServers, error) {
	ag, _ := s.Agent(agent)
	if ag.Tools == nil || len(ag.Tools.MCPServers) == 0 {
		return nil, nil
	}
	// close takes a session's servers out of the map before it marks
	// them closed, so one found closed here was found a moment before:
	// looking again finds (or stores) a fresh one.
	var sm *sessionMCP
	for {
		v, _ := as.running.LoadOrStore(s.ID, &sessionMCP{agents: map[string]MCPServers{}})
		sm = v.(*sessionMCP)
		sm.mu.Lock()
		if !sm.closed {
			break
		}
		sm.mu.Unlock()
	}
	defer sm.mu.Unlock()
	sm.used = as.now()
	if m := sm.agents[agent]; m != nil {
		return m, nil
	}
	var m MCPServers
	err := errNoTooling
	if as.tooling != nil {
		m, err = as.tooling.StartMCP(ctx, place(s, agent, *ag.Tools))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s's MCP servers did not start, so the team did not: %w", ErrBadInput, agent, err)
	}
	sm.agents[agent] = m
	return m, nil
}

// agentMCPPlaces is where an agent's stdio servers run: the places of its
// commands (its live workspace, the contexts, the state directory hidden),
// as plain data for the Tooling, which chooses the sandbox.
func (svc *Service) agentMCPPlaces(s *Session, agent string, set AgentTools) AgentMCP {
	ag, _ := s.Agent(agent)
	a := AgentMCP{SessionID: s.ID, AgentID: agent, Settings: set, Hide: svc.hiddenPaths(s), ReadOnly: svc.agentRules(ag).Role.SandboxReadOnly()}
	if t := svc.team(s); t != nil {
		if live, err := t.Prepare(agent); err == nil {
			a.Workspace = live
		}
		for _, c := range t.Contexts {
			a.Contexts = append(a.Contexts, providers.ContextDir{Name: c.Name, Path: c.Path, Write: c.IsWrite()})
		}
	}
	return a
}

// close stops every MCP server of a session; they start again if the
// session runs again.
func (as *agentServers) close(id string) {
	v, ok := as.running.LoadAndDelete(id)
	if !ok {
		return
	}
	sm := v.(*sessionMCP)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.closed = true
	for agent, m := range sm.agents {
		if err := m.Close(); err != nil {
			as.log.Warn().Err(err).Str("session", id).Str("agent", agent).Msg("an MCP server did not close cleanly")
		}
	}
}

// held lists the sessions whose servers run here.
func (as *agentServers) held() []string {
	var ids []string
	as.running.Range(func(id, _ any) bool {
		ids = append(ids, id.(string))
		return true
	})
	return ids
}

// holds tells whether the session's servers run here.
func (as *agentServers) holds(id string) bool {
	_, ok := as.running.Load(id)
	return ok
}

// lastUsed tells when the session's servers were last taken (false: none
// run here).
func (as *agentServers) lastUsed(id string) (time.Time, bool) {
	v, ok := as.running.Load(id)
	if !ok {
		return time.Time{}, false
	}
	sm := v.(*sessionMCP)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.used, !sm.closed
}

// closeUnused stops the session's servers unless a step has taken them
// since cutoff: the sweep's look (what it read of the session, or the idle
// limit) is then out of date, and the step keeps them. Under the same lock
// as agent's, so a step either took them before (and is seen here) or finds
// them closed and starts new ones.
func (as *agentServers) closeUnused(id string, cutoff time.Time) bool {
	v, ok := as.running.Load(id)
	if !ok {
		return false
	}
	sm := v.(*sessionMCP)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if sm.closed || sm.used.After(cutoff) {
		return false
	}
	as.running.CompareAndDelete(id, sm)
	sm.closed = true
	for agent, m := range sm.agents {
		if err := m.Close(); err != nil {
			as.log.Warn().Err(err).Str("session", id).Str("agent", agent).Msg("an MCP server did not close cleanly")
		}
	}
	return true
}

// closeAll stops every session's MCP servers (CancelAll).
func (as *agentServers) closeAll() {
	as.running.Range(func(id, _ any) bool {
		as.close(id.(string))
		return true
	})
}
