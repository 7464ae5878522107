package codex

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// Codex is told the rules two ways. Up front, its own sandbox: read-only
// for an agent that may not write its workspace (the read-only role),
// else workspace-write, whose network stays off unless the rules allow
// the network outright; both keep every write outside the workspace (and
// TMPDIR) off at the OS level, inside ours. Per call, a PreToolUse hook
// (0.171: `hooks.PreToolUse` in its config, run without its trust review
// by --dangerously-bypass-hook-trust, since the step writes it) asks the
// engine before each shell command, apply_patch and MCP call; the hook can
// only refuse (an "allow" it reports as unsupported), so an allowed call
// prints nothing and Codex's own sandbox still applies.

// permissionArgs are the run's sandbox and hook settings.
func permissionArgs(r cliagent.Run) []string {
	p := r.Permissions
	if p == nil {
		return []string{"--sandbox", "workspace-write"}
	}
	args := []string{"--sandbox", sandboxMode(p.Mode),
		"-c", "sandbox_workspace_write.network_access=" + fmt.Sprint(netAllowed(p.Mode)),
	}
	if len(p.Hook) > 0 {
		args = append(args, "--dangerously-bypass-hook-trust",
			"-c", "features.codex_hooks=true",
			"-c", `hooks.PreToolUse=[{hooks=[{type="command",timeout=`+fmt.Sprint(int(cliagent.HookTimeout/time.Second))+`,command=`+tomlString(cliagent.ShellLine(p.Hook))+`}]}]`)
	}
	return args
}

func sandboxMode(m permissions.CoarseMode) string {
	if m.SandboxReadOnly || m.WriteWorkspace.Verdict == permissions.Deny {
		return "read-only"
	}
	return "workspace-write"
}

func netAllowed(m permissions.CoarseMode) bool {
	return m.Net.Verdict == permissions.Allow && !m.Net.Partial
}

type hookInput struct {
	Tool  string          `json:"tool_name"`
	Input json.RawMessage `json:"tool_input"`
}

// Question implements cliagent.Gatekeeper: Codex's PreToolUse input.
func (CLI) Question(payload json.RawMessage, workspace string) (string, []permissions.Action, error) {
	var q hookInput
	if err := json.Unmarshal(payload, &q); err != nil || q.Tool == "" {
		return "", nil, fmt.Errorf("codex's hook input names no tool")
	}
	var in map[string]any
	_ = json.Unmarshal(q.Input, &in)
	switch {
	case q.Tool == "apply_patch":
		var acts []permissions.Action
		for _, p := range patchPaths(patchText(q.Input, in)) {
			acts = append(acts, cliagent.ActionsFor(cliagent.KindWrite, p, workspace)...)
		}
		if len(acts) == 0 {
			acts = cliagent.ActionsFor(cliagent.KindWrite, "", workspace)
		}
		return q.Tool, acts, nil
	case strings.HasPrefix(q.Tool, "mcp__"+relay.ServerName+"__"):
		return q.Tool, nil, nil // the Step's own tools, judged there
	case strings.HasPrefix(q.Tool, "mcp__"):
		target := strings.TrimPrefix(q.Tool, "mcp__")
		if server, tool, ok := strings.Cut(target, "__"); ok {
			target = server + "/" + tool
		}
		return q.Tool, cliagent.ActionsFor(cliagent.KindOther, target, workspace), nil
	}
	if cmd := commandOf(in); cmd != "" {
		return q.Tool, cliagent.ActionsFor(cliagent.KindShell, cmd, workspace), nil
	}
	return q.Tool, cliagent.ActionsFor(cliagent.KindOther, q.Tool, workspace), nil
}

// commandOf is a shell tool's command line: a string, or an argv joined.
func commandOf(in map[string]any) string {
	for _, k := range []string{"command", "cmd"} {
		switch v := in[k].(type) {
		case string:
			return v
		case []any:
			words := make([]string, 0, len(v))
			for _, w := range v {
				s, _ := w.(string)
				words = append(words, s)
			}
			if len(words) >= 3 && (words[0] == "bash" || words[0] == "sh" || strings.HasSuffix(words[0], "/bash")) && (words[1] == "-lc" || words[1] == "-c") {
				return words[2]
			}
			return strings.Join(words, " ")
		}
	}
	return ""
}

// patchText is an apply_patch call's patch, wherever the input holds it.
func patchText(raw json.RawMessage, in map[string]any) string {
	for _, k := range []string{"command", "input", "patch"} {
		if s, ok := in[k].(string); ok {
			return s
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// patchPaths are the files a patch adds, updates, deletes or moves to.
func patchPaths(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSpace(line)
		for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(line, h); ok {
				out = append(out, strings.TrimSpace(p))
			}
		}
	}
	return out
}

// Answer implements cliagent.Gatekeeper: nothing to let a call go on (Codex
// takes no "allow"), a deny with the reason to refuse it.
func (CLI) Answer(_ json.RawMessage, ran bool, why string) string {
	if ran {
		return ""
	}
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": why}})
	return string(out)
}

// UsesPromptTool implements cliagent.Gatekeeper.
func (CLI) UsesPromptTool() bool { return false }

// Coarse implements cliagent.Gatekeeper.
func (CLI) Coarse(p cliagent.Permissions, _ bool) []permissions.Record {
	m := p.Mode
	const hook = "per call: PreToolUse hook asks the engine"
	sb := sandboxMode(m)
	writeIn := cliagent.CoarseRecord(Backend, permissions.Write, ".", m.WriteWorkspace, true, hook+"; --sandbox "+sb)
	if sb == "read-only" {
		writeIn = cliagent.CoarseRecord(Backend, permissions.Write, ".", m.WriteWorkspace, false, "refused: --sandbox read-only (the OS refuses every write; ours binds the workspace read-only too)")
	}
	net := cliagent.CoarseRecord(Backend, permissions.Net, "*", m.Net, false,
		"refused for commands: --sandbox "+sb+" without network_access (the OS refuses; hook per call too)")
	if netAllowed(m) && sb != "read-only" {
		net = cliagent.CoarseRecord(Backend, permissions.Net, "*", m.Net, true, hook+"; sandbox_workspace_write.network_access=true")
	}
	return []permissions.Record{
		cliagent.CoarseRecord(Backend, permissions.Read, "*", permissions.CoarseVerdict{Verdict: permissions.Allow}, true, "unasked: Codex reads without tools the hook sees"),
		writeIn,
		cliagent.CoarseRecord(Backend, permissions.Write, "/*", m.WriteOutside, false, "refused: --sandbox "+sb+" (the OS refuses writes outside the workspace and TMPDIR)"),
		cliagent.CoarseRecord(Backend, permissions.Exec, "*", m.Exec, true, hook+"; commands run in --sandbox "+sb),
		net,
	}
}
