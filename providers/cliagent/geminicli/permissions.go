package geminicli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// Gemini CLI asks the Step before each tool call through a BeforeTool hook
// in the run's own settings.json (0.61: user-level hooks need no trust
// review; the command runs through the shell with the call's JSON on
// stdin, {tool_name, tool_input, mcp_context?, …}, and a stdout of
// {"decision":"deny","reason":…} blocks the call, the reason reaching the
// model). Its approval mode stays what the sandbox allows: auto_edit
// outside it (no shell), yolo inside.

// hookSettings is the settings.json block that installs the hook.
func hookSettings(p *cliagent.Permissions) map[string]any {
	return map[string]any{"BeforeTool": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{
		"type": "command", "name": "massgen-permissions", "command": cliagent.ShellLine(p.Hook), "timeout": cliagent.HookTimeout.Milliseconds(),
	}}}}}
}

// toolKinds are Gemini CLI's tools by what they do, and the input field
// naming their target.
var toolKinds = map[string]struct {
	kind  cliagent.ToolKind
	field string
}{
	"run_shell_command":   {cliagent.KindShell, "command"},
	"write_file":          {cliagent.KindWrite, "file_path"},
	"replace":             {cliagent.KindWrite, "file_path"},
	"read_file":           {cliagent.KindRead, "file_path"},
	"read_many_files":     {cliagent.KindRead, ""},
	"list_directory":      {cliagent.KindRead, "dir_path"},
	"glob":                {cliagent.KindRead, "dir_path"},
	"search_file_content": {cliagent.KindRead, "dir_path"},
	"grep_search":         {cliagent.KindRead, "dir_path"},
	"google_web_search":   {cliagent.KindSearch, ""},
	"write_todos":         {cliagent.KindRead, ""},
}

type hookInput struct {
	Tool  string          `json:"tool_name"`
	Input json.RawMessage `json:"tool_input"`
	MCP   *struct {
		Server string `json:"server_name"`
		Tool   string `json:"tool_name"`
	} `json:"mcp_context"`
}

var urlRe = regexp.MustCompile(`https?://[^\s"'<>]+`)

// Question implements cliagent.Gatekeeper: Gemini CLI's BeforeTool input.
func (CLI) Question(payload json.RawMessage, workspace string) (string, []permissions.Action, error) {
	var q hookInput
	if err := json.Unmarshal(payload, &q); err != nil || q.Tool == "" {
		return "", nil, fmt.Errorf("gemini's hook input names no tool")
	}
	if q.MCP != nil || strings.HasPrefix(q.Tool, "mcp_") {
		server, tool := "", q.Tool
		if q.MCP != nil {
			server, tool = q.MCP.Server, q.MCP.Tool
		}
		if server == relay.ServerName || strings.HasPrefix(q.Tool, "mcp_"+relay.ServerName+"_") {
			return q.Tool, nil, nil // the Step's own tools, judged there
		}
		return q.Tool, cliagent.ActionsFor(cliagent.KindOther, server+"/"+tool, workspace), nil
	}
	var in map[string]any
	_ = json.Unmarshal(q.Input, &in)
	if q.Tool == "web_fetch" {
		prompt, _ := in["prompt"].(string)
		url, _ := in["url"].(string)
		var acts []permissions.Action
		for _, u := range append(urlRe.FindAllString(prompt, -1), url) {
			if u != "" {
				acts = append(acts, cliagent.ActionsFor(cliagent.KindFetch, u, workspace)...)
			}
		}
		if len(acts) == 0 {
			acts = cliagent.ActionsFor(cliagent.KindFetch, "*", workspace)
		}
		return q.Tool, acts, nil
	}
	tk, known := toolKinds[q.Tool]
	if !known {
		// save_memory and the like: a rule can still name them.
		return q.Tool, cliagent.ActionsFor(cliagent.KindOther, q.Tool, workspace), nil
	}
	target, _ := in[tk.field].(string)
	for _, f := range []string{"file_path", "absolute_path", "dir_path", "path"} {
		if target == "" && tk.field != "" && tk.kind != cliagent.KindShell {
			target, _ = in[f].(string) // the field's name in other versions
		}
	}
	return q.Tool, cliagent.ActionsFor(tk.kind, target, workspace), nil
}

// Answer implements cliagent.Gatekeeper.
func (CLI) Answer(_ json.RawMessage, ran bool, why string) string {
	if ran {
		return "{}"
	}
	out, _ := json.Marshal(map[string]string{"decision": "deny", "reason": why})
	return string(out)
}

// UsesPromptTool implements cliagent.Gatekeeper.
func (CLI) UsesPromptTool() bool { return false }

// Coarse implements cliagent.Gatekeeper.
func (CLI) Coarse(p cliagent.Permissions, sandboxed bool) []permissions.Record {
	m := p.Mode
	const hook = "per call: BeforeTool hook asks the engine"
	exec := cliagent.CoarseRecord(Backend, permissions.Exec, "*", m.Exec, true, hook+" (--approval-mode yolo in the sandbox)")
	if !sandboxed {
		exec = cliagent.CoarseRecord(Backend, permissions.Exec, "*", m.Exec, false, "refused: --approval-mode auto_edit, no shell outside the sandbox")
	}
	return []permissions.Record{
		cliagent.CoarseRecord(Backend, permissions.Read, "*", permissions.CoarseVerdict{Verdict: permissions.Allow}, true, hook),
		cliagent.WorkspaceWrites(Backend, m, sandboxed, hook),
		cliagent.CoarseRecord(Backend, permissions.Write, "/*", m.WriteOutside, false,
			"refused: its file tools refuse a path outside the workspace, --include-directories and its temp directory (before the hook); a command's writes per call"),
		exec,
		cliagent.CoarseRecord(Backend, permissions.Net, "*", m.Net, true, hook+"; a command's own network is the sandbox's (shared: the CLI needs its API)"),
	}
}
