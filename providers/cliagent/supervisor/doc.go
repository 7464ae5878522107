// Package supervisor runs an unsandboxed coding-agent CLI under a small
// supervisor process: the server's own binary re-executed (Name), a child
// subreaper that the kernel signals when the server dies, and that kills
// the CLI's whole tree, the commands that left its process group or session
// included, when the server dies, when it is asked to stop, or when the CLI
// exits. It passes the CLI's stdin, stdout, stderr, directory, environment
// and exit status through unchanged. It knows nothing of CLIs, steps or
// sandboxes: package cliagent decides which runs it supervises.
package supervisor
