package providers

import (
	"context"
	"encoding/json"
	"time"
)

// Toolbox holds the tools an agent may call within one step besides the
// workflow tools: file tools, sandboxed commands, the tools of the operator's
// MCP servers. Coordination binds it to the directories it chose for the step
// (the agent's workspace, its contexts, its peers' snapshots); a provider
// knows nothing of sessions and only offers Tools and runs Call.
//
// A provider given a Toolbox runs a bounded loop: it offers Tools beside the
// workflow tools, runs each call the model makes through Call, sends the
// result back in its API's tool-result format, and stops when the model calls
// a workflow tool or a limit of the request is reached.
type Toolbox interface {
	Tools() []Tool
	// Call runs one tool. A failure the model can act on (a missing file, a
	// command that exits non-zero) is a result with IsError set, not an error;
	// err is for what ends the step (the context is done).
	Call(ctx context.Context, name string, args json.RawMessage) (ToolResult, error)
}

// MCPToolPrefix starts the name of every tool of the operator's MCP servers
// in a Toolbox: mcp__<server>__<tool>.
const MCPToolPrefix = "mcp__"

// MCPNamer is implemented by a Toolbox that offers MCP servers' tools: a
// tool's offered name can differ from its own (characters an API refuses
// in a function name replaced, a long name cut, a hash added), and
// MCPTool names the server and the tool's own name, which permission
// rules name; ok is false for a name that is no MCP server's tool.
type MCPNamer interface {
	MCPTool(name string) (server, tool string, ok bool)
}

// ToolResult is what a tool call returns to the model.
type ToolResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// ToolRecord is one tool call, command or file change an agent made in a
// step, as the step's tools.jsonl records it. Providers report them through
// Request.Record; coordination redacts known secret values before it stores
// them.
type ToolRecord struct {
	// Kind is "tool" (a toolbox call), "command", "file_change" or "mcp" (as
	// a CLI agent's stream reports them), "web_search", or "login" (a CLI
	// agent's refreshed login not copied back to the user's, with why).
	Kind        string          `json:"kind"`
	Name        string          `json:"name"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	ResultBytes int             `json:"result_bytes"`
	IsError     bool            `json:"is_error,omitempty"`
	Started     time.Time       `json:"started"`
	DurationMS  int64           `json:"duration_ms"`
	// CallID is the call's id in a CLI agent's stream, not kept: its
	// provider tells by it a call its CLI asked about from one it ran
	// without asking (cliagent.UnaskedCalls).
	CallID string `json:"-"`
}

// Recorder hears each tool record of a step as it happens. Its method is
// called on the provider's goroutine and must not block for long.
type Recorder interface {
	Record(ToolRecord)
}

// RecordTool passes a tool record to the request's recorder, if any.
func (r *Request) RecordTool(rec ToolRecord) {
	if r.Record != nil {
		r.Record.Record(rec)
	}
}
