package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// Config is what one step's tools are bound to.
type Config struct {
	// Workspace is the agent's live workspace: the only place the file
	// tools write, and run_command's working directory. "" offers no
	// writing tools and no run_command.
	Workspace string
	// Contexts are read at context/<name>/ (a write context too: its copy
	// is the workspace).
	Contexts []providers.ContextDir
	// Peers are the snapshots of the answers shown, read at peers/agentN/.
	Peers []Peer
	// Commands configures run_command.
	Commands Commands
	// MCP holds the agent's MCP servers, started once for the session
	// (StartMCP); nil: none. The Toolbox only borrows it.
	MCP *MCP
}

// Peer is one anonymous peer's snapshot directory.
type Peer struct {
	Agent string // anonymous name, agentN
	Dir   string
}

// PeersOf lists the snapshots of the answers a step shows.
func PeersOf(shown []providers.ShownAnswer) []Peer {
	var out []Peer
	for _, a := range shown {
		if a.FilesDir != "" {
			out = append(out, Peer{Agent: a.Alias, Dir: a.FilesDir})
		}
	}
	return out
}

// Commands are the operator's settings for run_command (the team file's
// sandbox and network fields, the server's hidden paths).
type Commands struct {
	// Disabled offers no run_command at all.
	Disabled bool
	// Unsandboxed is the operator's `sandbox: none`: commands run plainly
	// in the workspace. Callers warn when they set it.
	Unsandboxed bool
	// Network lets commands reach the network, loopback services included.
	Network bool
	// ReadOnlyWorkspace binds the workspace read-only for commands (the
	// read-only permission role): the OS, not a rule, keeps them from
	// writing.
	ReadOnlyWorkspace bool
	// Hide lists host paths never visible (the state directory, a tokens
	// file).
	Hide []string
	// Env holds extra KEY=VALUE variables for commands.
	Env []string
	// ReadOnly binds tool installs (a toolchain, a module cache).
	ReadOnly []sandbox.Bind
	// Timeout is a command's default time (0: 2 min); MaxTimeout the most
	// a model may ask for (0: 10 min).
	Timeout, MaxTimeout time.Duration
	// OutputCap bounds a command's output kept (0: 64 KiB).
	OutputCap int
}

// Toolbox is one step's tools. It implements providers.Toolbox; its
// maker closes it when the step ends (Close: the peers' trees its
// commands shared). Its MCP servers belong to the session's MCP, which the
// caller closes.
type Toolbox struct {
	workspace *place
	places    []place // contexts, then peers
	commands  Commands
	mcp       *MCP
	run       bool // run_command is offered
	tools     []providers.Tool
	trees     peersTrees // run_command's view of the peers (peerstree.go)
}

var _ providers.Toolbox = (*Toolbox)(nil)

// probe is sandbox.Probe, replaced in tests.
var probe = sandbox.Probe

var (
	contextName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	peerName    = regexp.MustCompile(`^agent[0-9]+$`)
)

// New builds a step's toolbox. run_command is offered only with a
// workspace, and only when the sandbox works here (sandbox.Probe) or the
// operator chose Unsandboxed.
func New(c Config) (*Toolbox, error) {
	t := &Toolbox{commands: c.Commands, mcp: c.MCP}
	if c.Workspace != "" {
		t.workspace = &place{name: "workspace", dir: c.Workspace, writable: true}
	}
	seen := map[string]bool{}
	for _, ctx := range c.Contexts {
		if !contextName.MatchString(ctx.Name) || ctx.Path == "" {
			return nil, fmt.Errorf("context %q (%s) needs a name of letters, digits, ., _ or - and a path", ctx.Name, ctx.Path)
		}
		t.places = append(t.places, place{name: "context/" + ctx.Name, dir: ctx.Path, hidden: hiddenIn(ctx.Path, c.Commands.Hide)})
	}
	for _, p := range c.Peers {
		if !peerName.MatchString(p.Agent) || p.Dir == "" {
			return nil, fmt.Errorf("peer %q (%s) needs an anonymous name agentN and a directory", p.Agent, p.Dir)
		}
		t.places = append(t.places, place{name: "peers/" + p.Agent, dir: p.Dir, hidden: hiddenIn(p.Dir, c.Commands.Hide)})
	}
	for _, p := range t.places {
		if seen[p.name] {
			return nil, fmt.Errorf("%s is given twice", p.name)
		}
		seen[p.name] = true
	}
	if t.workspace != nil && !c.Commands.Disabled {
		ok, _ := probe()
		t.run = ok || c.Commands.Unsandboxed
	}
	t.tools = t.list()
	return t, nil
}

// Tools lists what the model may call, in a stable order.
func (t *Toolbox) Tools() []providers.Tool { return t.tools }

// list is the toolbox's tools. With no place at all (a step given only its
// agent's MCP servers) there is nothing to list, read or search, so the file
// tools are left out rather than billed on every call.
func (t *Toolbox) list() []providers.Tool {
	var out []providers.Tool
	if t.workspace != nil || len(t.places) > 0 {
		out = append(out, listFilesTool(), readFileTool())
		if t.workspace != nil {
			out = append(out, writeFileTool(), editFileTool())
		}
		out = append(out, searchTool())
	}
	if t.run {
		out = append(out, t.runCommandTool())
	}
	out = append(out, t.mcp.Tools()...)
	return out
}

// MCPTool implements providers.MCPNamer for the agent's MCP servers' tools.
func (t *Toolbox) MCPTool(name string) (server, tool string, ok bool) { return t.mcp.MCPTool(name) }

// Call runs one tool. What the model did wrong is a result with IsError;
// the error is only for the context ending.
func (t *Toolbox) Call(ctx context.Context, name string, args json.RawMessage) (providers.ToolResult, error) {
	if err := ctx.Err(); err != nil {
		return providers.ToolResult{}, err
	}
	var (
		out string
		err error
	)
	switch name {
	case toolListFiles:
		out, err = t.listFiles(args)
	case toolReadFile:
		out, err = t.readFile(args)
	case toolWriteFile:
		out, err = t.writeFile(args)
	case toolEditFile:
		out, err = t.editFile(args)
	case toolSearch:
		out, err = t.search(ctx, args)
	case toolRunCommand:
		if t.run {
			return t.runCommand(ctx, args)
		}
		err = fmt.Errorf("run_command is not offered in this step")
	default:
		if t.mcp != nil && strings.HasPrefix(name, providers.MCPToolPrefix) {
			return t.mcp.Call(ctx, name, args)
		}
		err = fmt.Errorf("there is no tool %q; the tools are %s", name, t.names())
	}
	if cerr := ctx.Err(); cerr != nil {
		return providers.ToolResult{}, cerr
	}
	if err != nil {
		return providers.ToolResult{Content: err.Error(), IsError: true}, nil
	}
	return providers.ToolResult{Content: out}, nil
}

func (t *Toolbox) names() string {
	var names []string
	for _, tool := range t.tools {
		names = append(names, tool.Name)
	}
	return strings.Join(names, ", ")
}

// decode reads a tool's arguments, refusing unknown fields so that a
// misspelt one is not silently ignored.
func decode(tool string, args json.RawMessage, v any) error {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s's arguments do not fit its schema: %v", tool, err)
	}
	return nil
}
