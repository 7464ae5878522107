package codex

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

func run() cliagent.Run {
	return cliagent.Run{
		Model: "gpt-5.5", Prompt: "secret task text", System: "You are agent one.", Workdir: "/w/ws", Home: "/w/home",
		ConfigDir: "/w/home/.codex", RunDir: "/w/run",
		Workflow:      cliagent.MCPServer{Name: "workflow", Command: `/opt/mass "gen"/massgen-mcp`, Args: []string{"workflow-server", "--view", "/w/run/view.json"}},
		WorkflowTools: []string{"new_answer", "vote"},
	}
}

func TestInvocationGivesTheWorkflowServerAndKeepsThePromptOffArgv(t *testing.T) {
	inv, err := CLI{}.Invocation(run())
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(inv.Args, " ")
	for _, want := range []string{
		"exec --json --skip-git-repo-check --sandbox workspace-write --cd /w/ws",
		`-c mcp_servers.workflow.command="/opt/mass \"gen\"/massgen-mcp"`,
		`-c mcp_servers.workflow.args=["workflow-server","--view","/w/run/view.json"]`,
		`-c mcp_servers.workflow.default_tools_approval_mode="approve"`,
		"-c mcp_servers.workflow.tool_timeout_sec=180", // outwaits an MCP server's own two minutes
		`-c approval_policy="never"`, "-c features.plugins=false", "-c analytics.enabled=false",
		"--model gpt-5.5",
	} {
		if !strings.Contains(argv, want) {
			t.Errorf("argv lacks %q:\n%s", want, argv)
		}
	}
	if inv.Args[len(inv.Args)-1] != "-" || strings.Contains(argv, "secret task") || slices.Contains(inv.Args, "resume") {
		t.Errorf("argv %q: the prompt comes on stdin (-), and a first run resumes nothing", inv.Args)
	}
	if !strings.HasPrefix(inv.Stdin, "<instructions>\nYou are agent one.\n</instructions>") || !strings.HasSuffix(inv.Stdin, "secret task text") {
		t.Errorf("stdin %q", inv.Stdin)
	}
	if len(inv.Files) != 0 {
		t.Errorf("files %v: Codex takes its MCP server on the command line", inv.Files)
	}
}

func TestInvocationResumesTheThread(t *testing.T) {
	r := run()
	r.Resume = "01a2-thread"
	inv, _ := CLI{}.Invocation(r)
	n := len(inv.Args)
	if n < 3 || inv.Args[n-3] != "resume" || inv.Args[n-2] != "01a2-thread" || inv.Args[n-1] != "-" {
		t.Fatalf("argv %q, want … resume <thread> -", inv.Args)
	}
	r.Prompt = " "
	if _, err := (CLI{}).Invocation(r); err == nil {
		t.Error("a step without a prompt was run")
	}
}

func TestTOMLStringsEscape(t *testing.T) {
	if got := tomlString("a\"b\\c\nd\x01"); got != `"a\"b\\c\u000Ad\u0001"` {
		t.Errorf("%s", got)
	}
}

func TestCheckAuth(t *testing.T) {
	dir := t.TempDir()
	lookup := func(vars map[string]string) func(string) (string, string, bool) {
		return func(n string) (string, string, bool) { v, ok := vars[n]; return v, "the environment", ok }
	}
	ok, why := CLI{}.CheckAuth(cliagent.AuthContext{Lookup: lookup(map[string]string{"OPENAI_API_KEY": "k"}), ConfigDir: dir})
	if !ok || !strings.Contains(why, "OPENAI_API_KEY") {
		t.Errorf("key: %v %q", ok, why)
	}
	ok, why = CLI{}.CheckAuth(cliagent.AuthContext{Lookup: lookup(nil), ConfigDir: dir})
	if ok || !strings.Contains(why, "codex login") {
		t.Errorf("nothing: %v %q", ok, why)
	}
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("# mine\nmodel_provider = \"ollama\" # local\n[model_providers.ollama]\nmodel_provider = \"x\"\n"), 0o600)
	ok, why = CLI{}.CheckAuth(cliagent.AuthContext{Lookup: lookup(nil), ConfigDir: dir})
	if !ok || !strings.Contains(why, "model provider ollama") {
		t.Errorf("custom provider: %v %q", ok, why)
	}
	os.WriteFile(filepath.Join(dir, "auth.json"), []byte(`{}`), 0o600)
	ok, why = CLI{}.CheckAuth(cliagent.AuthContext{Lookup: lookup(nil), ConfigDir: dir})
	if !ok || !strings.Contains(why, "Codex login") {
		t.Errorf("login: %v %q", ok, why)
	}
}

// A ChatGPT-plan login bills the plan: its costs are estimates. A key in the
// environment, a stored key, or another model provider bills an API.
func TestOnlyAChatGPTLoginIsASubscription(t *testing.T) {
	lookup := func(vars map[string]string) func(string) (string, string, bool) {
		return func(n string) (string, string, bool) { v, ok := vars[n]; return v, "the environment", ok }
	}
	plan := `{"OPENAI_API_KEY": null, "tokens": {"id_token": "x", "access_token": "y", "refresh_token": "z"}, "last_refresh": "2026-11-30T10:00:00Z"}`
	for _, c := range []struct {
		name, auth, config string
		vars               map[string]string
		want               bool
	}{
		{"ChatGPT login", plan, "", nil, true},
		{"auth_mode chatgpt", `{"auth_mode": "chatgpt"}`, "", nil, true},
		{"a stored key", `{"OPENAI_API_KEY": "dummy-key", "tokens": null}`, "", nil, false},
		{"auth_mode apikey", `{"auth_mode": "apikey", "tokens": {"a": 1}}`, "", nil, false},
		{"a key in the environment", plan, "", map[string]string{"OPENAI_API_KEY": "dummy-key"}, false},
		{"another model provider", plan, "model_provider = \"ollama\"\n", nil, false},
		{"no login", "", "", nil, false},
		{"a damaged auth.json", "{", "", nil, false},
	} {
		dir := t.TempDir()
		if c.auth != "" {
			os.WriteFile(filepath.Join(dir, "auth.json"), []byte(c.auth), 0o600)
		}
		if c.config != "" {
			os.WriteFile(filepath.Join(dir, "config.toml"), []byte(c.config), 0o600)
		}
		if got := (CLI{}).OnSubscription(cliagent.AuthContext{Lookup: lookup(c.vars), ConfigDir: dir}); got != c.want {
			t.Errorf("%s: subscription %v, want %v", c.name, got, c.want)
		}
	}
}

// Codex 0.171 installs its bundled skills into CODEX_HOME/skills/.system at
// every start; a sandboxed run's skills directory is the user's, read-only
// (a skill there is the user's setup, whose SKILL.md tells the model what to
// run), so the install would fail and log an ERROR at each of its four
// tries. A sandboxed run is told not to: the bundled skills are then not
// offered either, and the user's own still are. An unconfined run, in the
// user's own CODEX_HOME, keeps them.
func TestASandboxedRunLeavesTheBundledSkillsOut(t *testing.T) {
	r := run()
	r.Sandboxed = true
	inv, _ := CLI{}.Invocation(r)
	if !strings.Contains(strings.Join(inv.Args, " "), "-c skills.bundled.enabled=false") {
		t.Errorf("a sandboxed run's argv lacks -c skills.bundled.enabled=false:\n%q", inv.Args)
	}
	inv, _ = CLI{}.Invocation(run())
	if slices.Contains(inv.Args, "skills.bundled.enabled=false") {
		t.Errorf("an unconfined run leaves the bundled skills out: %q", inv.Args)
	}
}

// Every directory of CODEX_HOME that Codex 0.171 loads what it runs or
// follows from (measured with strace and the skill roots it lists) is the
// user's setup, read-only in the sandbox: skills (a SKILL.md and its
// scripts), agents (custom agents, each a config layer of its own, MCP
// servers included), hooks and plugins.
func TestEveryDirectoryCodexLoadsCodeFromIsTheUsersSetup(t *testing.T) {
	for _, name := range []string{"config.toml", "AGENTS.md", "rules", "hooks.json", "hooks", "plugins", "skills", "agents"} {
		if !slices.Contains(info.SetupFiles, name) {
			t.Errorf("%s is not among Codex's setup files %v: a sandboxed agent may write it for its next run", name, info.SetupFiles)
		}
	}
}
