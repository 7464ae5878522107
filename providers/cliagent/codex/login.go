package codex

import "github.com/massgen-go/massgen-mcp/providers/cliagent"

// loginRules is what a refresh of Codex's auth.json may change. A ChatGPT
// login names its account in tokens.account_id, and its id and access
// tokens (JSON Web Tokens) in their claims; a refresh rewrites the three
// tokens (the refresh token rotates) and last_refresh, never the account.
// The access token's claim is the one that counts: its signature is
// checked by OpenAI, so one claiming the user's account while of another
// signs no request in. A login of an API key (OPENAI_API_KEY) names no
// account and has nothing to refresh: a change of it is never copied back.
var loginRules = map[string]cliagent.LoginRule{
	"auth.json": {
		Tokens: [][]string{
			{"tokens", "id_token"}, {"tokens", "access_token"}, {"tokens", "refresh_token"}, {"last_refresh"},
		},
		Account: account,
	},
}

// account is the ChatGPT account a login is of: its account id, with
// which of its tokens carry claims (each must name that account), so a
// token of claims put where the login had an opaque one, or the reverse,
// is another login; "" when it names none or its tokens name another.
func account(login map[string]any) string {
	id := cliagent.Field(login, "tokens", "account_id")
	if id == "" {
		return ""
	}
	acct := id
	for _, tok := range []string{"id_token", "access_token"} {
		claims := cliagent.Claims(cliagent.Field(login, "tokens", tok))
		if claims == nil {
			acct += " " + tok + ":opaque"
			continue
		}
		if cliagent.Field(claims, "https://api.openai.com/auth", "chatgpt_account_id") != id {
			return ""
		}
	}
	return acct
}
