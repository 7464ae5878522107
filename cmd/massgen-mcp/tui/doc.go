// Package tui is the live terminal view of a team (`massgen-mcp run` on a
// terminal, `massgen-mcp status --watch`): a card per agent with its state
// and the text its model is streaming, the consensus map, progress against
// the limits, and keys for the coordination table (r), an agent's latest
// answer (a), the winner's files (f) and cancelling (q).
//
// The view draws from snapshots (a Source) at most ten times a second, so it
// never holds up a run; streamed text comes from the running process only
// (Live) and never reaches the ledger. Text pictures come from
// coordination/report; this package only lays them out and styles them.
package tui
