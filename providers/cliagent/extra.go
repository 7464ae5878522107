package cliagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// extraTools are the toolbox tools a step's workflow server serves besides
// the workflow tools: those of the operator's MCP servers (mcp__<server>__…).
// A CLI has its own file tools and shell, so the toolbox's others are not
// offered. The servers run where coordination started them (the agent's
// command sandbox, their secrets expanded in the server's process, never in
// a file the CLI can read); the Step runs each call through the toolbox,
// records it as the tool loop does, and counts it against the step's limit.
type extraTools struct {
	ctx    context.Context
	stop   context.CancelFunc // ends calls in flight when the step's run ends
	req    *providers.Request
	tools  []providers.Tool  // as the toolbox names them
	byName map[string]string // served name → toolbox name
	spent  *limits
}

// newExtraTools are the request's MCP server tools for one run of the CLI,
// counted in spent, or nil when it has none.
func newExtraTools(ctx context.Context, req *providers.Request, spent *limits) *extraTools {
	if req.Toolbox == nil {
		return nil
	}
	x := &extraTools{req: req, byName: map[string]string{}, spent: spent}
	for _, t := range req.Toolbox.Tools() {
		name := servedName(t.Name)
		if !strings.HasPrefix(t.Name, providers.MCPToolPrefix) || slices.ContainsFunc(req.Tools, func(w providers.Tool) bool { return w.Name == name }) {
			continue
		}
		x.byName[name] = t.Name
		t.Name = name
		x.tools = append(x.tools, t)
	}
	if len(x.tools) == 0 {
		return nil
	}
	x.ctx, x.stop = context.WithCancel(ctx)
	return x
}

// maxServedName keeps a served name within the tightest API limit on a
// function name (64) after the longest prefix a CLI puts before a workflow
// server's tools (Claude Code's mcp__workflow__, 15): a longer name makes
// the API refuse the CLI's every request.
const maxServedName = 64 - len("mcp__"+relay.ServerName+"__")

// servedName is a toolbox tool's name on the workflow server: without the
// toolbox's mcp__, and, when that is still too long, cut and made unique
// with a hash of the whole name (the Step maps it back).
func servedName(tool string) string {
	name := strings.TrimPrefix(tool, providers.MCPToolPrefix)
	if len(name) <= maxServedName {
		return name
	}
	sum := sha256.Sum256([]byte(tool))
	return name[:maxServedName-9] + "_" + hex.EncodeToString(sum[:4])
}

// end cancels the calls still running: the run is over, and its socket
// closes once they return.
func (x *extraTools) end() {
	if x != nil {
		x.stop()
	}
}

// offered is the tools the view lists, nil-safe.
func (x *extraTools) offered() []providers.Tool {
	if x == nil {
		return nil
	}
	return x.tools
}

// names are the served names, for the CLI's allow list.
func (x *extraTools) names() []string {
	if x == nil {
		return nil
	}
	out := make([]string, len(x.tools))
	for i, t := range x.tools {
		out[i] = t.Name
	}
	return out
}

// serves says whether name is an extra tool's served name.
func (x *extraTools) serves(name string) bool {
	if x == nil {
		return false
	}
	_, ok := x.byName[name]
	return ok
}

// call runs one forwarded call to a tool it serves.
func (x *extraTools) call(c relay.Call) relay.Verdict {
	name := x.byName[c.Tool]
	if why := x.spent.take(); why != "" {
		return relay.Verdict{Result: &providers.ToolResult{IsError: true, Content: why}}
	}
	res, err := providers.CallTool(x.ctx, x.req, providers.ToolCall{Name: name, Args: c.Arguments})
	if err != nil {
		res = providers.ToolResult{IsError: true, Content: fmt.Sprintf("%s did not run: %v", name, err)}
	}
	return relay.Verdict{Result: &res}
}
