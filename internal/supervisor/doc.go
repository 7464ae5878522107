// Package supervisor runs a process the server starts for an agent (an
// unsandboxed coding-agent CLI, a run_command, a stdio MCP server, bwrap
// itself) under a small supervisor process: the server's own binary
// re-executed (Name), a child subreaper that the kernel signals when the
// server dies, and that kills the process's whole tree, the commands that
// left its process group or session included, when the server dies, when
// it is asked to stop, or when the process exits. It passes the process's
// stdin, stdout, stderr, directory, environment and exit status through
// unchanged. It knows nothing of CLIs, steps, tools or sandboxes: packages
// cliagent and sandbox decide what runs under it.
package supervisor
