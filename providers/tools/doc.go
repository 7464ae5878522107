// Package tools builds the tools an API agent may call within a step
// besides the workflow tools (a providers.Toolbox): file tools confined with
// os.Root to the agent's workspace (read-write) and its contexts and peers'
// snapshots (read-only), run_command in the sandbox (package sandbox), and
// the tools of the operator's MCP servers as mcp__<server>__<tool> (MCP:
// started once per session per agent, stdio servers inside the sandbox,
// over mcp-go's client).
//
// The model names files as workspace/<path> (or just <path>),
// context/<name>/<path> and peers/agentN/<path>, the names a step's prompt
// uses; inside run_command the same places are /workspace, /context/<name>
// and /peers/agentN.
//
// tools knows no protocol and no sessions: coordination hands it the
// directories and settings of one step.
package tools
