package claudecode

import (
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// CheckAuth implements cliagent.AuthChecker. With --bare (the default)
// Claude Code authenticates only with ANTHROPIC_API_KEY (or an
// apiKeyHelper); a Claude.ai login in ~/.claude is read only with the
// user's own setup.
func (CLI) CheckAuth(a cliagent.AuthContext) (bool, string) {
	for _, v := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
		if _, origin, ok := a.Lookup(v); ok {
			return true, "authenticates with " + v + " (found in " + origin + ")"
		}
	}
	for _, v := range []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"} {
		if val, _, ok := a.Lookup(v); ok && val != "0" && val != "" {
			return true, "authenticates through its cloud provider (" + v + ")"
		}
	}
	login := a.ConfigDir != "" && exists(filepath.Join(a.ConfigDir, ".credentials.json"))
	switch {
	case login && a.UserSetup:
		return true, "authenticates with your Claude Code login (" + a.ConfigDir + "; costs are estimates at list prices on a subscription)"
	case login:
		return false, "your Claude Code login is in " + a.ConfigDir + ", but agents run with --bare, which reads only ANTHROPIC_API_KEY: set MASSGEN_CLAUDE_CODE_SETUP=user to use the login (agents then also load your Claude Code settings and CLAUDE.md), or set ANTHROPIC_API_KEY"
	case a.UserSetup:
		return false, "no Claude Code login found (in " + a.ConfigDir + ") and ANTHROPIC_API_KEY is not set: run claude once and /login, or set ANTHROPIC_API_KEY"
	}
	return false, "ANTHROPIC_API_KEY is not set: set it, or log in with claude (/login) and set MASSGEN_CLAUDE_CODE_SETUP=user to use the login"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
