// Package chatapi is the OpenAI-compatible surface of a served team
// (MassGen's `massgen serve`): POST /v1/chat/completions and GET /v1/models.
// A model name picks a team (massgen, massgen/<team file>), the conversation
// is the task, the final answer is the message, and the coordination trace —
// the run's progress and report's summary — is its reasoning_content.
//
// It only translates: every decision is coordination's (a session, its run,
// its result), the team and the run slots are the MCP server's (through
// Host, which mcp.Server satisfies without either package importing the
// other), and the bearer token, tenants and limits are the guards the MCP
// server puts in front of every surface (mcp.Surface). It words the core's
// typed errors itself, in OpenAI's error shape, and knows nothing of MCP.
package chatapi
