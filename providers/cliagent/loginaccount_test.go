package cliagent_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/claudecode"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/codex"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/geminicli"
)

// jwt is an unsigned token carrying claims, shaped as the CLIs' id and
// access tokens are (header.claims.signature, base64url).
func jwt(t *testing.T, claims map[string]any) string {
	t.Helper()
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(body) + ".dummy-signature-not-real"
}

// codexLogin is a Codex auth.json of a ChatGPT login to account.
func codexLogin(t *testing.T, account, refresh, access string) string {
	auth := map[string]any{"chatgpt_account_id": account, "chatgpt_plan_type": "plus"}
	return mustJSON(t, map[string]any{
		"OPENAI_API_KEY": nil,
		"tokens": map[string]any{
			"id_token":      jwt(t, map[string]any{"sub": "user-of-" + account, "email": account + "@example.test", "https://api.openai.com/auth": auth}),
			"access_token":  jwt(t, map[string]any{"sub": "user-of-" + account, "access": access, "https://api.openai.com/auth": auth}),
			"refresh_token": refresh,
			"account_id":    account,
		},
		"last_refresh": "2026-12-01T10:00:00Z" + access,
	})
}

// claudeLogin is a Claude Code .credentials.json: its OAuth tokens carry
// no account the file names.
func claudeLogin(t *testing.T, refresh, access string, expires int64) string {
	return mustJSON(t, map[string]any{"claudeAiOauth": map[string]any{
		"accessToken": access, "refreshToken": refresh, "expiresAt": expires,
		"scopes": []string{"user:inference", "user:profile"}, "subscriptionType": "max", "rateLimitTier": "default_claude_max_5x", "clientId": "client-of-claude-code",
	}})
}

// geminiLogin is a Gemini CLI oauth_creds.json of a Google account.
func geminiLogin(t *testing.T, sub, refresh, access string, expiry int64) string {
	return mustJSON(t, map[string]any{
		"access_token": access, "refresh_token": refresh, "scope": "openid https://www.googleapis.com/auth/cloud-platform",
		"token_type": "Bearer", "expiry_date": expiry,
		"id_token": jwt(t, map[string]any{"sub": sub, "email": sub + "@example.test", "iat": expiry}),
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An agent's command in the sandbox can write the run's copy of the login
// file: a copy-back that took any JSON with the login's keys let it put
// another account's tokens (an attacker's) in the user's own login, and the
// user's later interactive sessions, their prompts and code, went to that
// account. Only a refresh of the same account is copied back: the account
// the file names unchanged, and only its token fields rewritten; a login
// naming no account (Claude Code's) only with its OAuth client unchanged.
func TestACopyBackTakesOnlyARefreshOfTheSameAccount(t *testing.T) {
	cases := []struct {
		name           string
		cli            cliagent.CLI
		file, was, now string
		copied         bool
	}{
		{"codex: a refresh of the same account", codex.CLI{}, "auth.json",
			codexLogin(t, "account-of-the-user", "dummy-refresh-one", "one"),
			codexLogin(t, "account-of-the-user", "dummy-refresh-two", "two"), true},
		{"codex: another account's tokens", codex.CLI{}, "auth.json",
			codexLogin(t, "account-of-the-user", "dummy-refresh-one", "one"),
			codexLogin(t, "account-of-an-attacker", "dummy-refresh-attacker", "two"), false},
		{"codex: another account's tokens under the user's account id", codex.CLI{}, "auth.json",
			codexLogin(t, "account-of-the-user", "dummy-refresh-one", "one"),
			withField(t, codexLogin(t, "account-of-an-attacker", "dummy-refresh-attacker", "two"), []string{"tokens", "account_id"}, "account-of-the-user"), false},
		{"codex: another account's access token", codex.CLI{}, "auth.json",
			codexLogin(t, "account-of-the-user", "dummy-refresh-one", "one"),
			withField(t, codexLogin(t, "account-of-the-user", "dummy-refresh-two", "two"), []string{"tokens", "access_token"},
				jwt(t, map[string]any{"sub": "user-of-an-attacker", "https://api.openai.com/auth": map[string]any{"chatgpt_account_id": "account-of-an-attacker"}})), false},
		{"codex: a refresh of a login whose tokens carry no claims", codex.CLI{}, "auth.json",
			withField(t, withField(t, codexLogin(t, "account-of-the-user", "dummy-refresh-one", "one"), []string{"tokens", "access_token"}, "dummy-opaque-access-one"), []string{"tokens", "id_token"}, "dummy-opaque-id-one"),
			withField(t, withField(t, codexLogin(t, "account-of-the-user", "dummy-refresh-two", "two"), []string{"tokens", "access_token"}, "dummy-opaque-access-two"), []string{"tokens", "id_token"}, "dummy-opaque-id-two"), true},
		{"codex: another account's access token where the login had an opaque one", codex.CLI{}, "auth.json",
			withField(t, codexLogin(t, "account-of-the-user", "dummy-refresh-one", "one"), []string{"tokens", "access_token"}, "dummy-opaque-access-one"),
			withField(t, codexLogin(t, "account-of-the-user", "dummy-refresh-two", "two"), []string{"tokens", "access_token"},
				jwt(t, map[string]any{"sub": "user-of-an-attacker", "https://api.openai.com/auth": map[string]any{"chatgpt_account_id": "account-of-an-attacker"}})), false},
		{"codex: a login of no account", codex.CLI{}, "auth.json",
			codexLogin(t, "", "dummy-refresh-one", "one"),
			codexLogin(t, "", "dummy-refresh-two", "two"), false},
		{"codex: an API key put in", codex.CLI{}, "auth.json",
			codexLogin(t, "account-of-the-user", "dummy-refresh-one", "one"),
			withField(t, codexLogin(t, "account-of-the-user", "dummy-refresh-one", "two"), []string{"OPENAI_API_KEY"}, "dummy-key-of-an-attacker"), false},
		{"claude: a new access token", claudecode.CLI{}, ".credentials.json",
			claudeLogin(t, "dummy-refresh-one", "dummy-access-one", 1000),
			claudeLogin(t, "dummy-refresh-one", "dummy-access-two", 2000), true},
		{"claude: a rotated refresh token (Anthropic's are single-use)", claudecode.CLI{}, ".credentials.json",
			claudeLogin(t, "dummy-refresh-one", "dummy-access-one", 1000),
			claudeLogin(t, "dummy-refresh-two", "dummy-access-two", 2000), true},
		{"claude: another OAuth client", claudecode.CLI{}, ".credentials.json",
			claudeLogin(t, "dummy-refresh-one", "dummy-access-one", 1000),
			withField(t, claudeLogin(t, "dummy-refresh-two", "dummy-access-two", 2000), []string{"claudeAiOauth", "clientId"}, "client-of-an-attacker"), false},
		{"gemini: a refresh of the same account", geminicli.CLI{}, filepath.Join("gemini-home", ".gemini", "oauth_creds.json"),
			geminiLogin(t, "google-user", "dummy-refresh-one", "dummy-access-one", 1000),
			geminiLogin(t, "google-user", "dummy-refresh-one", "dummy-access-two", 2000), true},
		{"gemini: another account's tokens", geminicli.CLI{}, filepath.Join("gemini-home", ".gemini", "oauth_creds.json"),
			geminiLogin(t, "google-user", "dummy-refresh-one", "dummy-access-one", 1000),
			geminiLogin(t, "google-attacker", "dummy-refresh-attacker", "dummy-access-two", 2000), false},
		{"gemini: another refresh token under the user's id token", geminicli.CLI{}, filepath.Join("gemini-home", ".gemini", "oauth_creds.json"),
			geminiLogin(t, "google-user", "dummy-refresh-one", "dummy-access-one", 1000),
			geminiLogin(t, "google-user", "dummy-refresh-attacker", "dummy-access-two", 1000), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			user, run := t.TempDir(), t.TempDir()
			userFile := filepath.Join(user, filepath.Base(tc.file))
			os.WriteFile(userFile, []byte(tc.was), 0o600)
			os.MkdirAll(filepath.Join(run, filepath.Dir(tc.file)), 0o700)
			os.WriteFile(filepath.Join(run, tc.file), []byte(tc.now), 0o600)
			warned := cliagent.SyncLoginBack(tc.cli.Info(), userFile, run, tc.file, []byte(tc.was))
			got, _ := os.ReadFile(userFile)
			switch {
			case tc.copied && string(got) != tc.now:
				t.Errorf("the user's login holds %s, want the refresh copied back", got)
			case tc.copied && len(warned) != 0:
				t.Errorf("a refresh copied back warned %q", warned)
			case !tc.copied && string(got) != tc.was:
				t.Errorf("the user's login holds %s, want it untouched", got)
			case !tc.copied && (len(warned) != 1 || !strings.Contains(warned[0], userFile)):
				t.Errorf("the copy-back refused warned %q, want one warning naming %s", warned, userFile)
			}
		})
	}
}

// withField sets the value at path of the JSON object login to to.
func withField(t *testing.T, login string, path []string, to string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(login), &m); err != nil {
		t.Fatal(err)
	}
	at := m
	for _, k := range path[:len(path)-1] {
		at = at[k].(map[string]any)
	}
	at[path[len(path)-1]] = to
	return mustJSON(t, m)
}
