// Package tooling is the core's Tooling (coordination.Tooling) over
// providers/tools: a step's toolbox (the file tools, search and
// run_command over its places) and an agent's MCP servers, its stdio
// servers in the sandbox of its commands. The core hands it plain data (the
// places, the agent's settings, the paths to hide) and keeps the lifetimes;
// this package chooses the sandbox and converts the session's settings to
// providers/tools' own.
//
// It sits above the core, beside teamfile, so that coordination imports no
// tools, no sandbox and no MCP client, and providers/tools knows no
// sessions.
package tooling
