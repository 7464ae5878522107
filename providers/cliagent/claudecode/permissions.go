package claudecode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// Claude Code asks the Step before each tool call it does not allow on its
// own: `--permission-prompt-tool` names the workflow server's prompt tool
// (an MCP tool, so it works under --bare, which skips hooks), and
// `--permission-mode default` with only the workflow tools allowed leaves
// every Edit, Write, Bash, WebFetch, WebSearch and read outside its
// directories to that tool. The prompt's input is {tool_name, input,
// tool_use_id}; its answer {"behavior":"allow","updatedInput":…} or
// {"behavior":"deny","message":…} (2.1.197, checked against the fakes).

// permissionArgs are the run's permission flags: with rules, the prompt
// tool decides; without, the CLI's usual acceptEdits.
func permissionArgs(r cliagent.Run) []string {
	p := r.Permissions
	if p == nil || p.PromptTool == "" {
		return []string{"--permission-mode", "acceptEdits"}
	}
	args := []string{"--permission-mode", "default", "--permission-prompt-tool", mcpTool(r.Workflow.Name, p.PromptTool)}
	if !r.Sandboxed {
		// Outside the sandbox the shell stays off whatever the rules
		// allow: a command string's classification is policy, not a
		// wall.
		args = append(args, "--disallowedTools", "Bash")
	}
	return args
}

// toolKinds are Claude Code's tools by what they do, and the input field
// naming their target.
var toolKinds = map[string]struct {
	kind  cliagent.ToolKind
	field string
}{
	"Bash":         {cliagent.KindShell, "command"},
	"Edit":         {cliagent.KindWrite, "file_path"},
	"MultiEdit":    {cliagent.KindWrite, "file_path"},
	"Write":        {cliagent.KindWrite, "file_path"},
	"NotebookEdit": {cliagent.KindWrite, "notebook_path"},
	"Read":         {cliagent.KindRead, "file_path"},
	"Glob":         {cliagent.KindRead, "path"},
	"Grep":         {cliagent.KindRead, "path"},
	"LS":           {cliagent.KindRead, "path"},
	"WebFetch":     {cliagent.KindFetch, "url"},
	"WebSearch":    {cliagent.KindSearch, ""},
	// Its bookkeeping changes nothing outside the conversation.
	"TodoWrite": {cliagent.KindRead, ""},
}

type prompt struct {
	Tool  string          `json:"tool_name"`
	Input json.RawMessage `json:"input"`
}

// Question implements cliagent.Gatekeeper.
func (CLI) Question(payload json.RawMessage, workspace string) (string, []permissions.Action, error) {
	var q prompt
	if err := json.Unmarshal(payload, &q); err != nil || q.Tool == "" {
		return "", nil, fmt.Errorf("claude's permission prompt names no tool: %s", clip(string(payload)))
	}
	tk, known := toolKinds[q.Tool]
	if strings.HasPrefix(q.Tool, mcpTool(relay.ServerName, "")) {
		return q.Tool, nil, nil // the Step's own tools, judged there
	}
	if !known {
		target := q.Tool
		if rest, ok := strings.CutPrefix(q.Tool, "mcp__"); ok {
			if server, tool, ok := strings.Cut(rest, "__"); ok {
				target = server + "/" + tool
			}
		}
		return q.Tool, cliagent.ActionsFor(cliagent.KindOther, target, workspace), nil
	}
	var in map[string]any
	_ = json.Unmarshal(q.Input, &in)
	target, _ := in[tk.field].(string)
	return q.Tool, cliagent.ActionsFor(tk.kind, target, workspace), nil
}

// Answer implements cliagent.Gatekeeper.
func (CLI) Answer(payload json.RawMessage, ran bool, why string) string {
	var q prompt
	_ = json.Unmarshal(payload, &q)
	var out []byte
	if ran {
		input := q.Input
		if len(input) == 0 || input[0] != '{' {
			input = json.RawMessage("{}")
		}
		out, _ = json.Marshal(map[string]any{"behavior": "allow", "updatedInput": input})
	} else {
		out, _ = json.Marshal(map[string]any{"behavior": "deny", "message": why})
	}
	return string(out)
}

var _ cliagent.UnaskedCalls = CLI{}

// CallID implements cliagent.UnaskedCalls: the prompt's tool_use_id, the
// id its stream gives the call.
func (CLI) CallID(payload json.RawMessage) string {
	var q struct {
		ID string `json:"tool_use_id"`
	}
	_ = json.Unmarshal(payload, &q)
	return q.ID
}

// Asked implements cliagent.UnaskedCalls: the prompt Claude Code would
// have sent of a call it ran without asking (a read in its directories).
func (CLI) Asked(rec providers.ToolRecord) json.RawMessage {
	input := rec.Arguments
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	out, _ := json.Marshal(map[string]any{"tool_name": rec.Name, "input": input, "tool_use_id": rec.CallID})
	return out
}

// UsesPromptTool implements cliagent.Gatekeeper.
func (CLI) UsesPromptTool() bool { return true }

// Coarse implements cliagent.Gatekeeper: every kind goes on to the prompt
// tool but the shell outside the sandbox, which is off.
func (CLI) Coarse(p cliagent.Permissions, sandboxed bool) []permissions.Record {
	const perCall = "per call: --permission-mode default, each call asks the engine (--permission-prompt-tool)"
	m := p.Mode
	exec := cliagent.CoarseRecord(Backend, permissions.Exec, "*", m.Exec, true, perCall)
	if !sandboxed {
		exec = cliagent.CoarseRecord(Backend, permissions.Exec, "*", m.Exec, false, "refused: --disallowedTools Bash, no shell outside the sandbox")
	}
	return []permissions.Record{
		cliagent.CoarseRecord(Backend, permissions.Read, "*", permissions.CoarseVerdict{Verdict: permissions.Allow}, true,
			"unasked in the workspace and added directories; other reads per call (--permission-prompt-tool)"),
		cliagent.WorkspaceWrites(Backend, m, sandboxed, perCall),
		exec,
		cliagent.CoarseRecord(Backend, permissions.Net, "*", m.Net, true, perCall+"; a command's own network is the sandbox's (shared: the CLI needs its API)"),
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
