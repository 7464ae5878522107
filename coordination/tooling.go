package coordination

import (
	"context"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Tooling equips server steps with tools besides the workflow tools: the
// file tools and run_command over a step's places, and the agents' MCP
// servers. The core decides when (a step's toolbox is built when its
// provider first asks; an agent's servers start before a run's first step
// or at a step-driven session's first step, and close when the run ends or
// the session finishes, mcpservers.go) and hands plain data; the Tooling
// decides how, sandbox included. coordination/tooling implements it over
// providers/tools. A Service without one (Options.Tooling nil) offers the
// workflow tools alone and refuses to start agents with MCP servers.
type Tooling interface {
	// Toolbox builds one step's toolbox over its places. An error is
	// logged and the step runs with the workflow tools alone.
	Toolbox(ctx context.Context, p StepPlaces) (providers.Toolbox, error)
	// StartMCP starts one agent's MCP servers for a session and returns
	// them running: the core lends them to the agent's steps
	// (StepPlaces.MCP) and closes them. A server that does not start is an
	// error naming it, with nothing left running.
	StartMCP(ctx context.Context, a AgentMCP) (MCPServers, error)
}

// MCPServers are one agent's running MCP servers, as Tooling.StartMCP
// returned them: the core only lends them to Tooling.Toolbox and closes
// them.
type MCPServers interface {
	Close() error
}

// StepPlaces is what one step's toolbox is bound to, as Tooling.Toolbox
// receives it.
type StepPlaces struct {
	SessionID, AgentID string
	// Workspace, Contexts and Shown are the step's places: the agent's live
	// workspace (writable), the project directories and the answers shown,
	// whose snapshots (FilesDir, when set) are read-only.
	Workspace string
	Contexts  []providers.ContextDir
	Shown     []providers.ShownAnswer
	// Settings are the agent's tool settings (never nil here).
	Settings AgentTools
	// MCP are the agent's running MCP servers (nil: none), borrowed.
	MCP MCPServers
	// Hide are host paths no command may see (the state directory).
	Hide []string
	// ReadOnly: the agent's permission role is read-only, so its commands'
	// sandbox must have no writable path (the workspace bound read-only).
	ReadOnly bool
}

// AgentMCP is what Tooling.StartMCP is given to start one agent's MCP
// servers: its settings, and the sandbox of its commands, where its stdio
// servers run.
type AgentMCP struct {
	SessionID, AgentID string
	// Settings are the agent's tool settings: its MCPServers, the
	// allowed_tools and exclude_tools whose mcp__ names filter the servers'
	// tools, its sandbox and network settings.
	Settings AgentTools
	// Workspace is the agent's live workspace ("" when the session keeps
	// no files), mounted at /workspace.
	Workspace string
	// Contexts are the session's project directories, bound read-only at
	// /context/<name>.
	Contexts []providers.ContextDir
	// Hide are host paths no server may see (the state directory).
	Hide []string
	// ReadOnly: the agent's permission role is read-only; its stdio
	// servers' sandbox binds the workspace read-only.
	ReadOnly bool
}

// MCPServer is one of an agent's MCP servers as the operator's team file
// gives it (MassGen's mcp_servers entry) and session.json keeps it: plain
// settings, started by the Tooling. Its fields are those of
// providers/tools.MCPServer, in the same order with the same JSON names, so
// the two convert into each other and session.json reads as it always did.
type MCPServer struct {
	Type    string            `json:"type"`              // stdio | streamable-http
	Command string            `json:"command,omitempty"` // stdio: the program (on PATH or a path)
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"` // stdio: ${VAR} expands from the server's environment
	// ReadOnly lists host paths a stdio server needs besides its command
	// (a script, its packages), bound read-only at the same paths.
	ReadOnly []string          `json:"read_only_paths,omitempty"`
	URL      string            `json:"url,omitempty"`     // streamable-http
	Headers  map[string]string `json:"headers,omitempty"` // ${VAR} expands too
	// AllowedTools, when set, offers only these of the server's tools;
	// ExcludeTools hides some. Names are the server's own.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	ExcludeTools []string `json:"exclude_tools,omitempty"`
}
