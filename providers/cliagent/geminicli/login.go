package geminicli

import "github.com/massgen-go/massgen-mcp/providers/cliagent"

// loginRules is what a refresh of Gemini CLI's login may change. Its
// oauth_creds.json (google-auth-library's credentials) names the Google
// account in its id token's sub; a refresh rewrites the access token, its
// expiry, the id token, and the scope and token type beside them. Google
// keeps the refresh token, which here must stay the user's: it is what
// the user's later sessions refresh with, and it is opaque. Its
// google_accounts.json (the accounts logged in with, by email) has nothing
// a refresh changes.
var loginRules = map[string]cliagent.LoginRule{
	"oauth_creds.json": {
		Tokens: [][]string{
			{"access_token"}, {"expiry_date"}, {"id_token"}, {"scope"}, {"token_type"},
		},
		Account: func(login map[string]any) string {
			return cliagent.Field(cliagent.Claims(cliagent.Field(login, "id_token")), "sub")
		},
	},
	"google_accounts.json": {},
}
