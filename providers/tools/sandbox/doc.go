// Package sandbox runs an agent's commands under bubblewrap (bwrap): every
// namespace unshared (no network unless the spec asks for it), no
// capabilities, an unprivileged uid, an environment of allow-listed
// variables only, the system read-only, the agent's workspace at /workspace
// the only writable place besides what the caller binds read-write, HOME an
// empty tmpfs, and .env files, the state directory and any tokens file
// hidden. A command runs in its own process group; on a timeout or a
// cancelled context the whole group is killed, and bwrap's PID namespace
// takes every process the command started with it.
//
// sandbox knows no protocol and no tools: it is given directories and an
// argv. providers/tools offers run_command on top of it; CLI agents
// (providers/cliagent) run their CLIs through Command.
package sandbox
