package coordination

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// sessionMCP holds the MCP servers of one session's agents, started once
// (before the run's first step, or lazily by the first server step of a
// step-driven session or of a resume) and reused by every step, closed when
// the run ends or the session finishes.
type sessionMCP struct {
	mu     sync.Mutex
	agents map[string]*tools.MCP
	closed bool // by closeMCP: a step that found it a moment before starts a new one
}

// hasMCP says whether any agent of the session has MCP servers.
func hasMCP(s *Session) bool {
	for _, a := range s.Agents {
		if a.Tools != nil && len(a.Tools.MCPServers) > 0 {
			return true
		}
	}
	return false
}

// startMCP starts the MCP servers of every agent of the session that has
// some and whose servers are not running: a server that fails is an error
// naming the agent, before any step.
func (svc *Service) startMCP(ctx context.Context, s *Session) error {
	if !hasMCP(s) {
		return nil
	}
	for _, a := range s.Agents {
		if _, err := svc.agentMCP(ctx, s, a.ID); err != nil {
			return err
		}
	}
	return nil
}

// agentMCP returns the agent's running MCP servers, starting them if they
// are not (nil when the agent has none).
func (svc *Service) agentMCP(ctx context.Context, s *Session, agent string) (*tools.MCP, error) {
	ag, _ := s.Agent(agent)
	if ag.Tools == nil || len(ag.Tools.MCPServers) == 0 {
		return nil, nil
	}
	// closeMCP takes a session's servers out of the map before it marks
	// them closed, so one found closed here was found a moment before:
	// looking again finds (or stores) a fresh one.
	var sm *sessionMCP
	for {
		v, _ := svc.mcps.LoadOrStore(s.ID, &sessionMCP{agents: map[string]*tools.MCP{}})
		sm = v.(*sessionMCP)
		sm.mu.Lock()
		if !sm.closed {
			break
		}
		sm.mu.Unlock()
	}
	defer sm.mu.Unlock()
	if m := sm.agents[agent]; m != nil {
		return m, nil
	}
	set := ag.Tools
	conf := tools.MCPConfig{Servers: set.MCPServers, Sandbox: svc.mcpSandbox(s, agent, *set)}
	// The agent's tool lists name MCP tools by their exposed names; the
	// other names are the built-in tools', which the servers do not have.
	for _, n := range set.Allowed {
		if strings.HasPrefix(n, providers.MCPToolPrefix) {
			conf.AllowedTools = append(conf.AllowedTools, n)
		}
	}
	for _, n := range set.Excluded {
		if strings.HasPrefix(n, providers.MCPToolPrefix) {
			conf.ExcludeTools = append(conf.ExcludeTools, n)
		}
	}
	m, err := tools.StartMCP(ctx, conf)
	if err != nil {
		return nil, fmt.Errorf("%w: %s's MCP servers did not start, so the team did not: %w", ErrBadInput, agent, err)
	}
	sm.agents[agent] = m
	return m, nil
}

// mcpSandbox is where an agent's stdio servers run: the sandbox of its
// commands (its live workspace at /workspace, the contexts read-only, the
// state directory hidden, its network setting).
func (svc *Service) mcpSandbox(s *Session, agent string, set AgentTools) sandbox.Spec {
	spec := sandbox.Spec{Hide: svc.hiddenPaths(s), Network: set.Network, Unsandboxed: set.NoSandbox}
	if t := svc.team(s); t != nil {
		if live, err := t.Prepare(agent); err == nil {
			spec.Workspace = live
		}
		for _, c := range t.Contexts {
			spec.ReadOnly = append(spec.ReadOnly, sandbox.Bind{Src: c.Path, Dst: "/context/" + c.Name})
		}
	}
	return spec
}

// closeMCP stops every MCP server of a session; they start again if the
// session runs again.
func (svc *Service) closeMCP(id string) {
	v, ok := svc.mcps.LoadAndDelete(id)
	if !ok {
		return
	}
	sm := v.(*sessionMCP)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.closed = true
	for agent, m := range sm.agents {
		if err := m.Close(); err != nil {
			svc.log.Warn().Err(err).Str("session", id).Str("agent", agent).Msg("an MCP server did not close cleanly")
		}
	}
}
