package install

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// geminiSettings is a ~/.gemini/settings.json as Gemini CLI and its user
// leave it: nested settings, a comment (Gemini reads JSON with comments),
// another server.
const geminiSettings = `{
  // set by /auth
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "mcpServers": {
    "other": {"command": "other-mcp", "args": ["--flag"]}
  }
}
`

// geminiServers reads the mcpServers of a Gemini settings file.
func geminiServers(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		t.Fatalf("not JSONC: %v\n%s", err, data)
	}
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(std, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.MCPServers
}

// Gemini CLI withholds variables that look like keys from the servers it
// starts and expands $NAME / ${NAME} in an entry's env: the entry passes the
// provider variables set now as references, never their values, and has no
// "type" (Gemini's entries are told apart by command, url or httpUrl).
func TestGeminiInstallPassesKeysByReferenceAndUninstallRestoresBytes(t *testing.T) {
	o := opts(t, "gemini", ScopeUser)
	path := filepath.Join(o.Home, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(geminiSettings), 0o600)

	r := mustInstall(t, o)
	if r.Changes[0].Path != path || r.Changes[0].Action != "updated" {
		t.Fatalf("report: %+v", r)
	}
	got := read(t, path)
	servers := geminiServers(t, got)
	m := servers["massgen"]
	wantEnv := map[string]any{"OPENAI_API_KEY": "${OPENAI_API_KEY}", "ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}"}
	if m["command"] != "massgen-mcp" || !reflect.DeepEqual(m["args"], []any{"serve"}) || !reflect.DeepEqual(m["env"], wantEnv) || m["type"] != nil {
		t.Fatalf("the entry: %v\n%s", m, got)
	}
	if servers["other"]["command"] != "other-mcp" || !strings.Contains(string(got), "// set by /auth") || !strings.Contains(string(got), `"selectedType": "gemini-api-key"`) {
		t.Fatalf("the user's settings changed:\n%s", got)
	}
	if bytes.Contains(got, []byte(secret)) {
		t.Fatal("a key value was written")
	}
	if !strings.Contains(r.String(), "Gemini CLI") {
		t.Fatalf("no note on how Gemini CLI passes the keys:\n%s", r)
	}
	// Gemini CLI 0.61 starts a user-level server only in a trusted folder
	// (e2e/clients.sh sees it "Disabled" in an untrusted one).
	if !strings.Contains(r.String(), "user-level servers only in folders you have trusted") {
		t.Fatalf("the report does not say the server runs only in trusted folders:\n%s", r)
	}
	if r := mustInstall(t, o); r.Changed() {
		t.Fatalf("a second install changed something: %+v", r)
	}
	r, err := Uninstall(o)
	if err != nil || r.Changes[0].Action != "restored" || string(read(t, path)) != geminiSettings {
		t.Fatalf("uninstall: %v %v\n%s", r, err, read(t, path))
	}
}

// The project scope is .gemini/settings.json (read only in a folder the
// user trusts: install never trusts it for them) with the skills in
// .gemini/skills; GEMINI_CLI_HOME stands for the home Gemini CLI keeps
// .gemini in.
func TestGeminiProjectScopeSkillsAndGeminiCLIHome(t *testing.T) {
	o := opts(t, "gemini", ScopeProject)
	o.Skills = true
	r := mustInstall(t, o)
	path := filepath.Join(o.Dir, ".gemini", "settings.json")
	if r.Changes[0].Path != path || r.Changes[0].Action != "created" || geminiServers(t, read(t, path))["massgen"] == nil {
		t.Fatalf("report: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, ".gemini", "skills", "team-run", "SKILL.md")); err != nil {
		t.Fatalf("the skills are not where Gemini CLI loads a project's: %v", err)
	}
	if !strings.Contains(r.String(), "trust") {
		t.Fatalf("the report does not say the folder must be trusted:\n%s", r)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, ".gemini")); !os.IsNotExist(err) {
		t.Fatal(".gemini left behind after uninstall")
	}

	cliHome := t.TempDir()
	u := withEnv(opts(t, "gemini", ScopeUser), "GEMINI_CLI_HOME", cliHome)
	u.Skills = true
	r = mustInstall(t, u)
	if want := filepath.Join(cliHome, ".gemini", "settings.json"); r.Changes[0].Path != want {
		t.Fatalf("installed into %s, want %s", r.Changes[0].Path, want)
	}
	if _, err := os.Stat(filepath.Join(cliHome, ".gemini", "skills", "massgen-run", "SKILL.md")); err != nil {
		t.Fatalf("the skills are not under GEMINI_CLI_HOME: %v", err)
	}
	if entries, _ := os.ReadDir(u.Home); len(entries) != 1 || entries[0].Name() != ".local" {
		t.Fatalf("install wrote into HOME beside its records although GEMINI_CLI_HOME is set: %v", entries)
	}
}
