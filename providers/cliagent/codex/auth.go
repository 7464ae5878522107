package codex

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// CheckAuth implements cliagent.AuthChecker: an API key (OPENAI_API_KEY,
// CODEX_API_KEY), a login (`codex login`: auth.json in CODEX_HOME, a
// ChatGPT plan or a stored key), or a model provider of config.toml that
// is not OpenAI's (it authenticates its own way).
func (CLI) CheckAuth(a cliagent.AuthContext) (bool, string) {
	for _, v := range []string{"CODEX_API_KEY", "OPENAI_API_KEY"} {
		if _, origin, ok := a.Lookup(v); ok {
			return true, "authenticates with " + v + " (found in " + origin + ")"
		}
	}
	if a.ConfigDir != "" {
		if _, err := os.Stat(filepath.Join(a.ConfigDir, "auth.json")); err == nil {
			return true, "authenticates with your Codex login (" + a.ConfigDir + "/auth.json; on a ChatGPT plan costs are estimates at API list prices)"
		}
		if p := modelProvider(filepath.Join(a.ConfigDir, "config.toml")); p != "" && p != "openai" {
			return true, "uses the model provider " + p + " of " + a.ConfigDir + "/config.toml"
		}
	}
	return false, "OPENAI_API_KEY is not set and there is no Codex login: set OPENAI_API_KEY, or run `codex login` (a ChatGPT plan works)"
}

// OnSubscription implements cliagent.SubscriptionTeller: with no API key
// in the environment and OpenAI as the model provider, a `codex login` on a
// ChatGPT plan (auth.json holding its tokens and no stored key) bills the
// plan, so costs priced at API list prices are estimates.
func (CLI) OnSubscription(a cliagent.AuthContext) bool {
	for _, v := range []string{"CODEX_API_KEY", "OPENAI_API_KEY"} {
		if _, _, ok := a.Lookup(v); ok {
			return false
		}
	}
	if a.ConfigDir == "" {
		return false
	}
	if p := modelProvider(filepath.Join(a.ConfigDir, "config.toml")); p != "" && p != "openai" {
		return false
	}
	data, err := os.ReadFile(filepath.Join(a.ConfigDir, "auth.json"))
	if err != nil {
		return false
	}
	var auth struct {
		Mode   string          `json:"auth_mode"`
		Key    *string         `json:"OPENAI_API_KEY"`
		Tokens json.RawMessage `json:"tokens"`
	}
	if json.Unmarshal(data, &auth) != nil {
		return false
	}
	switch strings.ToLower(auth.Mode) {
	case "chatgpt":
		return true
	case "apikey", "api_key":
		return false
	}
	hasTokens := len(auth.Tokens) > 0 && string(auth.Tokens) != "null"
	return hasTokens && (auth.Key == nil || *auth.Key == "")
}

// modelProvider reads the top-level model_provider of a config.toml ("" when
// it names none).
func modelProvider(path string) string { return topLevel(path, "model_provider") }

// ConfigModel implements cliagent.ConfiguredModel: the top-level model of
// the run's config.toml, the one codex exec uses when not given --model
// (its stream never names it).
func (CLI) ConfigModel(configDir string) string {
	return topLevel(filepath.Join(configDir, "config.toml"), "model")
}

// topLevel reads a top-level string key of a config.toml ("" when it names
// none). Only the top level counts: a key after the first table header
// belongs to that table (a profile's model is not the run's).
func topLevel(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			return ""
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		v, _, _ = strings.Cut(v, "#")
		return strings.Trim(strings.TrimSpace(v), `"'`)
	}
	return ""
}
