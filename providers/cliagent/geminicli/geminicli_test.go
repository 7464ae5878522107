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
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache directory")
	}
	os.MkdirAll(base, 0o700)
	dir, err := os.MkdirTemp(base, "massgen-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return cliagent.Run{
		Model: "gemini-2.5-pro", Prompt: "secret task text", System: "You are agent one.", Workdir: "/w/ws", Home: "/w/home",
		ConfigDir: "/home/me/.gemini", RunDir: dir, ReadDirs: []string{"/peers/agent1", "/ctx/repo"},
		Workflow:      cliagent.MCPServer{Name: "workflow", Command: "/bin/massgen-mcp", Args: []string{"workflow-server", "--view", "v.json"}},
		WorkflowTools: []string{"new_answer", "vote"},
	}
}

func TestInvocationGeneratesSettingsOutsideTheWorkspace(t *testing.T) {
	r := run(t)
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
	}
	if err := json.Unmarshal(inv.Files[settingsFile], &settings); err != nil {
		t.Fatal(err)
	}
	wf := settings.MCPServers["workflow"]
	if wf.Command != "/bin/massgen-mcp" || len(wf.Args) != 3 || !wf.Trust || settings.Telemetry.Enabled || settings.General.EnableAutoUpdate {
		t.Errorf("settings %s", inv.Files[settingsFile])
	}
	env := strings.Join(inv.Env, " ")
	if !strings.Contains(env, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="+filepath.Join(r.RunDir, settingsFile)) || !strings.Contains(env, "GEMINI_CLI_HOME=/home/me") {
		t.Errorf("env %q", inv.Env)
	}
	r.Sandboxed = true
	inv, _ = CLI{}.Invocation(r)
	if !strings.Contains(strings.Join(inv.Args, " "), "--approval-mode yolo") {
		t.Errorf("sandboxed argv %q: the shell is allowed inside the sandbox", inv.Args)
	}
}

func TestInvocationRefusesARunDirectoryOthersCanWriteAbove(t *testing.T) {
	r := run(t)
	r.RunDir = filepath.Join(t.TempDir(), "run") // under /tmp
	if st, err := os.Stat(os.TempDir()); err != nil || st.Mode().Perm()&0o022 == 0 {
		t.Skip("TMPDIR is private here")
	}
	_, err := CLI{}.Invocation(r)
	if err == nil || !strings.Contains(err.Error(), "other users can write") {
		t.Fatalf("err = %v", err)
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
