// Package install registers massgen-mcp in an MCP client's configuration —
// Claude Code, Codex, Cursor, VS Code, Gemini CLI — and copies the skills where that
// client loads them, and undoes it. It merges with what is there (other
// servers, keys, comments and formatting untouched, JSONC and TOML alike),
// writes through a symlinked config, leaves a massgen entry the user wrote
// alone unless forced, is idempotent, reports every change, never approves a
// project-scoped server on the user's behalf and never writes a key's value:
// only the names of provider variables, which the client passes through.
// For Claude Code it reads where the massgen plugin is enabled, since the
// plugin and an entry would be two identical servers (plugin.go).
//
// Every file it creates or changes is recorded (its bytes before, a hash of
// its bytes after) so uninstall restores a file it changed byte for byte when
// nobody touched it since, and deletes a file it created. install knows
// nothing of the protocol or of MCP messages.
package install
