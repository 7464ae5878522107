// Package cliagent runs a coding-agent CLI (Codex, Claude Code, Gemini CLI)
// as a team member: each step runs the CLI once, non-interactively, as a
// subprocess in the agent's live workspace, with the step's prompt, and reads
// its machine-readable stream line by line through the CLI's Parser. The
// agent submits new_answer or vote by calling the workflow MCP server
// (package relay, `massgen-mcp workflow-server`), which forwards the call
// over the step's private Unix socket to the Step here; the first call whose
// shape is right is the step's Action.
//
// The framework owns what every CLI shares: the environment allow-list, a
// per-agent HOME outside the workspace with only the CLI's own config
// directory in it, generated configs outside the workspace, the sandbox,
// the server-wide bound on CLI processes (SetMaxProcesses), the process
// group that timeouts and cancellation kill whole, secret redaction, usage
// and cost, resuming the CLI's session within a team session, and the
// corrective retry. Each CLI (sub-packages claudecode, codex, geminicli)
// only says how to invoke it (CLI) and how to read its stream (Parser).
//
// cliagent knows nothing of sessions or the ledger: it turns a Request into
// an Action like every provider; coordination validates the Action.
package cliagent
