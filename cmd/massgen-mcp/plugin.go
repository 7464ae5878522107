package main

import (
	"fmt"
	"io"
	"os"

	"github.com/massgen-go/massgen-mcp/mcp/install"
)

// warnBesidePlugin: a stdio server that the Claude Code plugin started
// (its manifest sets install.PluginEnv) says on stderr, which Claude Code
// keeps in its MCP log, when Claude Code also has a massgen entry of its
// own — install claude-code before the plugin leaves both connected.
func warnBesidePlugin(w io.Writer, env func(string) string) {
	if env(install.PluginEnv) == "" {
		return
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return
	}
	wd, _ := os.Getwd()
	if msg := install.BesidePlugin(install.Options{Home: home, Dir: wd, Env: env}); msg != "" {
		fmt.Fprintln(w, "massgen-mcp: warning:", msg)
	}
}
