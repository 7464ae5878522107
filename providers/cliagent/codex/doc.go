// Package codex drives OpenAI's Codex CLI as a team member: `codex exec
// --json` in the agent's live workspace, resumed with `codex exec resume`
// within a session. Parser reads its JSONL events (thread.started, item.*,
// turn.completed, turn.failed, error) into the step's text, tool records,
// usage, thread id and final message.
//
// codex knows the CLI's flags, configuration and stream; it knows nothing of
// coordination, and nothing of how the framework in package cliagent runs
// and confines the process.
package codex
