package geminicli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

func run(t *testing.T) cliagent.Run {
	dir := t.TempDir()
	return cliagent.Run{
		Model: "gemini-2.5-pro", Prompt: "secret task text", System: "You are agent one.", Workdir: "/w/ws", Home: "/w/home",
		ConfigDir: "/home/me/.gemini", RunDir: dir, ReadDirs: []string{"/peers/agent1", "/ctx/repo"},
		Workflow:      cliagent.MCPServer{Name: "workflow", Command: "/bin/massgen-mcp", Args: []string{"workflow-server", "--view", "v.json"}},
		WorkflowTools: []string{"new_answer", "vote"},
	}
}

func TestInvocationGivesEachRunItsOwnHomeWithTheUsersAuth(t *testing.T) {
	r := run(t)
	user := t.TempDir()
	os.WriteFile(filepath.Join(user, "settings.json"), []byte(`{"security":{"auth":{"selectedType":"oauth-personal"}},"mcpServers":{"mine":{"command":"x"}}}`), 0o600)
	os.WriteFile(filepath.Join(user, "oauth_creds.json"), []byte(`{"refresh_token":"r"}`), 0o600)
	r.HostConfigDir = user
	inv, err := CLI{}.Invocation(r)
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(inv.Args, " ")
	for _, want := range []string{`-p  --output-format stream-json --approval-mode auto_edit --skip-trust --allowed-mcp-server-names workflow`,
		"--model gemini-2.5-pro", "--include-directories /peers/agent1,/ctx/repo"} {
		if !strings.Contains(argv, want) {
			t.Errorf("argv lacks %q:\n%s", want, argv)
		}
	}
	if strings.Contains(argv, "secret task") || slices.Contains(inv.Args, "--resume") || !strings.HasSuffix(inv.Stdin, "secret task text") {
		t.Errorf("argv %q stdin %q: the prompt comes on stdin, no session is resumed", inv.Args, inv.Stdin)
	}
	var settings struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Trust   bool
		} `json:"mcpServers"`
		Telemetry struct{ Enabled bool }
		General   struct {
			EnableAutoUpdate bool `json:"enableAutoUpdate"`
		}
		Security struct {
			Auth        struct{ SelectedType string }
			FolderTrust struct{ Enabled *bool } `json:"folderTrust"`
		}
	}
	if err := json.Unmarshal(inv.Files["gemini-home/.gemini/settings.json"], &settings); err != nil {
		t.Fatalf("%v: files %v", err, inv.Files)
	}
	wf := settings.MCPServers["workflow"]
	if wf.Command != "/bin/massgen-mcp" || len(wf.Args) != 3 || !wf.Trust || settings.Telemetry.Enabled || settings.General.EnableAutoUpdate {
		t.Errorf("settings %s", inv.Files["gemini-home/.gemini/settings.json"])
	}
	// Folder trust on, whatever the CLI's default: the settings are
	// merged before --skip-trust trusts the session, so the workspace's
	// .gemini/settings.json, the agent's to write, is not applied
	// (TestRealGeminiIgnoresProjectSettingsAnAgentWroteInItsWorkspace).
	if ft := settings.Security.FolderTrust.Enabled; ft == nil || !*ft {
		t.Errorf("folder trust is not on in the run's settings: %s", inv.Files["gemini-home/.gemini/settings.json"])
	}
	if settings.Security.Auth.SelectedType != "oauth-personal" || len(settings.MCPServers) != 1 {
		t.Errorf("the user's auth choice, and none of their MCP servers: %s", inv.Files["gemini-home/.gemini/settings.json"])
	}
	if string(inv.Files["gemini-home/.gemini/oauth_creds.json"]) != `{"refresh_token":"r"}` {
		t.Errorf("the user's login is not copied: %v", inv.Files)
	}
	// Its token is refreshed into the copy, which is copied back to the
	// user's once the run ended (a rotated refresh token is not lost); the
	// settings, with the permission hook, are pinned read-only in the
	// sandbox.
	if len(inv.Writable) != 0 || len(inv.Logins) != 1 || inv.Logins["gemini-home/.gemini/oauth_creds.json"] != filepath.Join(user, "oauth_creds.json") {
		t.Errorf("writable %q, logins %q: want the copied login only, copied back to the user's", inv.Writable, inv.Logins)
	}
	if strings.Join(inv.Env, " ") != "GEMINI_CLI_HOME="+filepath.Join(r.RunDir, "gemini-home") {
		t.Errorf("env %q", inv.Env)
	}
	r.Sandboxed = true
	r.HostConfigDir = ""
	inv, _ = CLI{}.Invocation(r)
	if !strings.Contains(strings.Join(inv.Args, " "), "--approval-mode yolo") || len(inv.Files) != 1 {
		t.Errorf("sandboxed argv %q, files %v: the shell inside the sandbox; no login without a config dir", inv.Args, inv.Files)
	}
}

func TestCheckAuth(t *testing.T) {
	dir := t.TempDir()
	lookup := func(vars map[string]string) func(string) (string, string, bool) {
		return func(n string) (string, string, bool) { v, ok := vars[n]; return v, "./.env", ok }
	}
	for _, c := range []struct {
		vars map[string]string
		ok   bool
		why  string
	}{
		{map[string]string{"GEMINI_API_KEY": "k"}, true, "GEMINI_API_KEY (found in ./.env)"},
		{map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "l"}, true, "Vertex AI"},
		{map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true"}, false, "GOOGLE_CLOUD_PROJECT"},
		{nil, false, "sign in with Google"},
	} {
		ok, why := CLI{}.CheckAuth(cliagent.AuthContext{Lookup: lookup(c.vars), ConfigDir: dir})
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("%v: %v %q", c.vars, ok, why)
		}
	}
	os.WriteFile(filepath.Join(dir, "oauth_creds.json"), []byte(`{}`), 0o600)
	if ok, why := (CLI{}).CheckAuth(cliagent.AuthContext{Lookup: lookup(nil), ConfigDir: dir}); !ok || !strings.Contains(why, "Google login") {
		t.Errorf("login: %v %q", ok, why)
	}
}

// The Google login is the subscription (its costs are estimates); a Gemini
// API key or Vertex AI bills an API.
func TestOnlyTheGoogleLoginIsASubscription(t *testing.T) {
	lookup := func(vars map[string]string) func(string) (string, string, bool) {
		return func(n string) (string, string, bool) { v, ok := vars[n]; return v, "./.env", ok }
	}
	login := t.TempDir()
	os.WriteFile(filepath.Join(login, "oauth_creds.json"), []byte(`{}`), 0o600)
	for _, c := range []struct {
		name string
		dir  string
		vars map[string]string
		want bool
	}{
		{"Google login", login, nil, true},
		{"an API key beside it", login, map[string]string{"GEMINI_API_KEY": "dummy-key"}, false},
		{"Vertex AI beside it", login, map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true"}, false},
		{"no login", t.TempDir(), nil, false},
	} {
		if got := (CLI{}).OnSubscription(cliagent.AuthContext{Lookup: lookup(c.vars), ConfigDir: c.dir}); got != c.want {
			t.Errorf("%s: subscription %v, want %v", c.name, got, c.want)
		}
	}
}
