package claudecode

import "github.com/massgen-go/massgen-mcp/providers/cliagent"

// loginRules is what a refresh of Claude Code's .credentials.json may
// change. Its claudeAiOauth holds opaque tokens, their expiry, scopes,
// plan (subscriptionType, rateLimitTier) and OAuth client (2.1.197), and
// names no account (that is in .claude.json, which the agent's run makes
// afresh and may write). Anthropic's refresh tokens are single-use: a
// refresh in the run redeems the user's, so a rotated one that is not
// copied back logs the user out (and every later run of the agent). The
// refresh token may therefore change with the access token; the OAuth
// client may not (a refresh never changes it). With no account to
// compare, a whole login of another account put in by the agent passes:
// telling the account needs Anthropic's profile endpoint, a network call
// the copy-back does not make.
var loginRules = map[string]cliagent.LoginRule{
	".credentials.json": {
		Tokens: [][]string{
			{"claudeAiOauth", "accessToken"}, {"claudeAiOauth", "refreshToken"}, {"claudeAiOauth", "expiresAt"},
			{"claudeAiOauth", "scopes"}, {"claudeAiOauth", "subscriptionType"}, {"claudeAiOauth", "rateLimitTier"},
		},
	},
}
