// Command massgen-mcp runs a team of LLM agents on one task with the MassGen
// protocol: as an MCP server (serve, over stdio or streamable HTTP) or from
// the command line (run, status, sessions, backends, criteria, checkpoint,
// config check, fake-providers, version).
//
// cmd only wires: it parses flags and team files into coordination settings,
// opens the store and the providers, hands the work to coordination.Service
// (directly, or through the mcp package for serve) and maps outcomes to exit
// codes in one place (exit.go). It holds no protocol logic. The benchmarks
// are a separate command, cmd/massgen-bench, so the server binary never links
// their plotting code.
package main
