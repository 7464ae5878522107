// Package relay is the workflow MCP server a CLI agent calls to submit its
// step: `massgen-mcp workflow-server` runs it over stdio as a child of the
// CLI. It serves exactly the step's workflow tools (new_answer, and vote
// with the view's vote_enum), as the step's view file lists them, plus the
// agent's MCP server tools the view lists as extra, and forwards every call
// over the step's Unix socket to the Step that started the CLI (package
// cliagent), whose verdict, or the extra tool's result, becomes the tool's
// result. With permission rules it also serves PromptTool (Claude Code's
// permission prompt) and, run with --hook, answers one question of a CLI's
// PreToolUse/BeforeTool hook (Hook); both forward the CLI's own wire to
// the Step, which decides and words the answer, and a step that cannot be
// reached refuses.
//
// relay never opens the session store and knows nothing of the protocol: it
// carries calls and verdicts. The wire types here (View, Call, Verdict) are
// the whole contract between the two ends.
package relay
