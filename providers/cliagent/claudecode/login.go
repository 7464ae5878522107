package claudecode

import "github.com/massgen-go/massgen-mcp/providers/cliagent"

// loginRules is what a refresh of Claude Code's .credentials.json may
// change. Its claudeAiOauth holds opaque tokens, their expiry, scopes,
// plan (subscriptionType, rateLimitTier) and OAuth client (2.1.197), and
// names no account (that is in .claude.json, which the agent's run makes
// afresh and may write). With no account to compare, only the access
// token, its expiry and what a refresh answers beside them may change: a
// refresh token that changed (an agent's, another account's, or one the
// CLI rotated) is never copied back, as the user's own refresh token still
// refreshes their own account.
var loginRules = map[string]cliagent.LoginRule{
	".credentials.json": {
		Tokens: [][]string{
			{"claudeAiOauth", "accessToken"}, {"claudeAiOauth", "expiresAt"}, {"claudeAiOauth", "scopes"},
			{"claudeAiOauth", "subscriptionType"}, {"claudeAiOauth", "rateLimitTier"}, {"claudeAiOauth", "clientId"},
		},
	},
}
