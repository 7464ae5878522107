// Package geminicli drives Google's Gemini CLI as a team member: `gemini -p
// … --output-format stream-json` in the agent's live workspace, with a
// generated settings file (outside the workspace) naming the step's workflow
// MCP server; every step is a fresh CLI session (see Parser.Outcome). Parser
// reads its JSONL events (init, message, tool_use, tool_result, error,
// result) into the step's text, tool records, usage and final message.
//
// geminicli knows the CLI's flags, settings and stream; it knows nothing of
// coordination, and nothing of how the framework in package cliagent runs
// and confines the process.
package geminicli
