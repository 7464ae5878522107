package tooling

import (
	"context"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// Builtin is the tooling every binary gives its services: providers/tools'
// toolbox and MCP servers, commands and stdio servers in bubblewrap unless
// the agent's settings say sandbox: none.
type Builtin struct{}

var _ coordination.Tooling = Builtin{}

// Toolbox implements coordination.Tooling: tools.New over the step's
// places, lending it the agent's running MCP servers.
func (Builtin) Toolbox(_ context.Context, p coordination.StepPlaces) (providers.Toolbox, error) {
	var mcp *tools.MCP
	if p.MCP != nil {
		m, ok := p.MCP.(*tools.MCP)
		if !ok {
			return nil, fmt.Errorf("%s's MCP servers (%T) were not started by this tooling; its toolbox has no MCP tools", p.AgentID, p.MCP)
		}
		mcp = m
	}
	return tools.New(tools.Config{
		Workspace: p.Workspace,
		Contexts:  p.Contexts,
		Peers:     tools.PeersOf(p.Shown),
		MCP:       mcp,
		Commands: tools.Commands{
			Unsandboxed:       p.Settings.NoSandbox,
			Network:           p.Settings.Network,
			Hide:              p.Hide,
			ReadOnlyWorkspace: p.ReadOnly,
		},
	})
}

// StartMCP implements coordination.Tooling: tools.StartMCP over the agent's
// servers, in the sandbox of its commands.
func (Builtin) StartMCP(ctx context.Context, a coordination.AgentMCP) (coordination.MCPServers, error) {
	set := a.Settings
	conf := tools.MCPConfig{Servers: servers(set.MCPServers), Sandbox: sandboxOf(a)}
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
		return nil, err // not m: a nil *tools.MCP in the interface would not be nil
	}
	return m, nil
}

// sandboxOf is where an agent's stdio MCP servers run: the sandbox of its
// commands (its live workspace at /workspace, the contexts read-only at
// /context/<name>, the hidden paths hidden, its network setting).
func sandboxOf(a coordination.AgentMCP) sandbox.Spec {
	spec := sandbox.Spec{Workspace: a.Workspace, WorkspaceReadOnly: a.ReadOnly, Hide: a.Hide, Network: a.Settings.Network, Unsandboxed: a.Settings.NoSandbox}
	for _, c := range a.Contexts {
		spec.ReadOnly = append(spec.ReadOnly, sandbox.Bind{Src: c.Path, Dst: "/context/" + c.Name})
	}
	return spec
}

// servers converts the session's MCP server settings to providers/tools'
// (the same fields; nil for none).
func servers(in map[string]coordination.MCPServer) map[string]tools.MCPServer {
	if in == nil {
		return nil
	}
	out := make(map[string]tools.MCPServer, len(in))
	for n, s := range in {
		out[n] = tools.MCPServer(s)
	}
	return out
}
