// Package mcp is massgen-mcp's MCP surface: the tools, resources and prompt
// of docs/DESIGN.md, "The MCP surface translates", and the transports that carry them (stdio and streamable
// HTTP, with Origin checks and bearer auth).
//
// mcp only translates. A handler decodes its typed arguments, makes one call
// on coordination.Service, and encodes the result (structuredContent plus a
// readable text rendering) or maps the error to an isError result with a fix.
// Protocol logic — who may act, staleness, consensus, what a view shows —
// belongs in coordination; mcp must not grow it. Likewise coordination knows
// nothing of MCP: progress reaches clients here, from coordination.Progress.
//
// One file per tool (run_team.go, start_team.go, step.go, team_status.go,
// finalize_team.go, cancel_team.go, list_backends.go,
// generate_eval_criteria.go, checkpoint.go), listed in one place in
// registry.go.
package mcp
