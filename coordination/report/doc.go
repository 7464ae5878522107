// Package report renders sessions as text for people: a status view
// (Markdown), a result (Summary, Result), the vote graph, the timeline
// swimlane, the coordination table and the session listing. One
// renderer serves the CLI, the MCP tools, the terminal view and the web view,
// so a person reads the same picture everywhere.
//
// It reads coordination's views and ledger and never decides, writes or
// calls anything; it knows nothing of terminals (no colour, no cursor
// control) — callers style what it returns.
package report
