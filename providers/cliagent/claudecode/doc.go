// Package claudecode drives Claude Code (`claude`) as a team member on the
// cliagent framework: `claude -p --output-format stream-json --verbose
// --permission-mode acceptEdits --strict-mcp-config --mcp-config <file>
// --setting-sources user`
// (and --bare unless the operator asks for the user's own Claude Code
// setup), --resume within a session, the prompt on stdin; and it reads
// Claude Code's stream-json events (system/init, assistant and user
// messages with tool_use and tool_result, the final result with
// total_cost_usd and usage).
//
// claudecode knows nothing of sessions or of how the workflow call travels:
// it names the workflow server in the MCP config and reads the stream.
package claudecode
