package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Install refuses the user's own massgen entry and shows it. Hand-written
// entries often carry the provider keys in their env block (the clients'
// own docs show env with values): the refusal shows the entry with those
// values masked, never the keys themselves — it goes to a terminal, a CI
// log, a pasted bug report.
func TestTheRefusalOfAUsersOwnEntryNeverShowsAKey(t *testing.T) {
	const key = "sk-test-dummy-not-a-key-OWN-ENTRY"
	own := map[string]string{
		"claude-code": "{\n  \"mcpServers\": {\n    \"massgen\": {\"command\": \"massgen-mcp\", \"args\": [\"serve\"], \"env\": {\"OPENAI_API_KEY\": \"" + key + "\"}}\n  }\n}\n",
		"cursor":      "{\"mcpServers\": {\"massgen\": {\"url\": \"http://127.0.0.1:8080/mcp\", \"headers\": {\"Authorization\": \"Bearer " + key + "\"}}}}\n",
		"vscode":      "{\n  \"servers\": {\n    \"massgen\": {\"command\": \"massgen-mcp\", \"env\": {\"ANTHROPIC_API_KEY\": \"" + key + "\"}},\n  },\n}\n",
		"codex":       "[mcp_servers.massgen]\ncommand = \"massgen-mcp\"\nargs = [\"serve\"]\n\n[mcp_servers.massgen.env]\nOPENAI_API_KEY = \"" + key + "\"\n",
		"gemini":      "{\"mcpServers\": {\"massgen\": {\"command\": \"massgen-mcp\", \"env\": {\"GEMINI_API_KEY\": \"" + key + "\"}}}}\n",
	}
	for _, client := range Clients {
		t.Run(client, func(t *testing.T) {
			o := opts(t, client, ScopeUser)
			d := o
			d.defaults()
			tg, _ := resolve(&d)
			os.MkdirAll(filepath.Dir(tg.path), 0o755)
			os.WriteFile(tg.path, []byte(own[client]), 0o600)
			_, err := Install(o)
			if !errors.Is(err, ErrForeignEntry) {
				t.Fatalf("not refused: %v", err)
			}
			if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), key[len(key)-8:]) {
				t.Fatalf("the refusal shows the key in the user's entry:\n%v", err)
			}
			if !strings.Contains(err.Error(), "massgen-mcp") && !strings.Contains(err.Error(), "127.0.0.1") {
				t.Fatalf("the refusal no longer shows the entry:\n%v", err)
			}
		})
	}
}
