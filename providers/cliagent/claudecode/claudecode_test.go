package claudecode

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

func run() cliagent.Run {
	return cliagent.Run{
		Model: "claude-opus-4-6", Prompt: "What is 17 * 23?", System: "rules", RunDir: "/run/step",
		Workflow:      cliagent.MCPServer{Name: "workflow", Command: "/bin/massgen-mcp", Args: []string{"workflow-server", "--view", "/run/step/view.json"}},
		WorkflowTools: []string{"new_answer", "vote"}, ReadDirs: []string{"/snap/agent2"},
	}
}

func TestInvocationIsBareStrictAndKeepsThePromptOutOfArgv(t *testing.T) {
	inv, err := CLI{}.Invocation(run())
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(inv.Args, " ")
	for _, want := range []string{
		"-p --output-format stream-json --verbose --permission-mode acceptEdits --strict-mcp-config --mcp-config /run/step/mcp.json",
		"--allowedTools mcp__workflow__new_answer,mcp__workflow__vote --setting-sources user --bare --model claude-opus-4-6 --add-dir /snap/agent2",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "17 * 23") || inv.Stdin != "What is 17 * 23?" {
		t.Errorf("the prompt goes on stdin only: args %q stdin %q", args, inv.Stdin)
	}
	if strings.Contains(args, "Bash") || strings.Contains(args, "--resume") || strings.Contains(args, "dangerously") {
		t.Errorf("args %q", args)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(inv.Files["mcp.json"], &cfg); err != nil || cfg.MCPServers["workflow"].Command != "/bin/massgen-mcp" ||
		!slices.Equal(cfg.MCPServers["workflow"].Args, []string{"workflow-server", "--view", "/run/step/view.json"}) {
		t.Fatalf("mcp.json = %s (%v)", inv.Files["mcp.json"], err)
	}
	if string(inv.Files["system.md"]) != "rules" {
		t.Fatalf("system.md = %q", inv.Files["system.md"])
	}
}

func TestInvocationResumesAllowsTheShellOnlySandboxedAndDropsBareForTheUsersSetup(t *testing.T) {
	r := run()
	r.Resume, r.Sandboxed, r.UserSetup = "sess-1", true, true
	inv, err := CLI{}.Invocation(r)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(inv.Args, " ")
	if !strings.Contains(args, "--resume sess-1") || !strings.Contains(args, "mcp__workflow__vote,Bash") || strings.Contains(args, "--bare") {
		t.Fatalf("args %q", args)
	}
}

func TestSubscriptionLoginsMakeTheCostAnEstimate(t *testing.T) {
	for src, want := range map[string]bool{"ANTHROPIC_API_KEY": false, "apiKeyHelper": false, "none": true, "/login managed key": true} {
		if subscription(src) != want {
			t.Errorf("apiKeySource %q: subscription %v", src, !want)
		}
	}
}

// The workspace's .claude/settings.json and settings.local.json are the
// agent's to write; loaded by its next run they would grant it allow rules
// past the step's permission gate. Every run loads the user's settings
// only.
func TestInvocationIgnoresTheWorkspacesProjectSettings(t *testing.T) {
	for _, userSetup := range []bool{false, true} {
		r := run()
		r.UserSetup = userSetup
		inv, err := CLI{}.Invocation(r)
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.Index(inv.Args, "--setting-sources"); i < 0 || i+1 >= len(inv.Args) || inv.Args[i+1] != "user" {
			t.Errorf("user setup %v: args %q load more than the user's settings", userSetup, inv.Args)
		}
	}
}

// Every entry of the config directory that Claude Code 2.1.197 loads what
// it runs or follows from (measured with strace and read in its bundle) is
// the user's setup, read-only in the sandbox: besides settings, CLAUDE.md,
// agents, commands, skills, output styles, plugins and hooks, its rules
// (instructions of every run, as CLAUDE.md), workflows (JavaScript it runs),
// and cowork_settings.json and cowork_plugins, which it reads instead of
// settings.json and plugins when CLAUDE_CODE_USE_COWORK_PLUGINS is set
// (a CLAUDE_CODE_ variable, passed to it). cowork_plugins' registry names
// each install by the user's absolute path, as plugins' does.
func TestEveryDirectoryClaudeLoadsCodeFromIsTheUsersSetup(t *testing.T) {
	for _, name := range []string{
		"settings.json", "CLAUDE.md", "agents", "commands", "skills", "output-styles", "plugins", "hooks",
		"rules", "workflows", "cowork_settings.json", "cowork_plugins",
	} {
		if !slices.Contains(info.SetupFiles, name) {
			t.Errorf("%s is not among Claude Code's setup files %v: a sandboxed agent may write it for its next run", name, info.SetupFiles)
		}
	}
	for _, name := range []string{"plugins", "cowork_plugins"} {
		if !slices.Contains(info.SetupAtPath, name) {
			t.Errorf("%s is not shown at the user's path too (SetupAtPath %v): its registry names installs by it", name, info.SetupAtPath)
		}
	}
}

// Of the config directory's other entries Claude Code 2.1.197 acts on,
// ide is never the user's: their IDE extensions' lock files there name
// each editor's port and auth token (an agent sharing the network could
// drive the editor), and one an agent planted would point its next run at
// a server of its choosing; it is an empty read-only directory. And only
// projects (the transcripts --resume reads) outlives a run: session-env
// (scripts sourced before each Bash command of a session, which later
// steps resume) is the run's own, made afresh with the rest.
func TestClaudesIDELocksAreNeverTheUsersAndOnlyItsTranscriptsAreKept(t *testing.T) {
	if !slices.Contains(info.EmptyFiles, "ide") || slices.Contains(info.SetupFiles, "ide") {
		t.Errorf("ide: empty %v, setup %v; want it empty and read-only, never the user's", info.EmptyFiles, info.SetupFiles)
	}
	if !slices.Equal(info.KeptDirs, []string{"projects"}) {
		t.Errorf("kept %v, want only projects", info.KeptDirs)
	}
}

// Claude Code 2.1.197 loads plugins from CLAUDE_CODE_PLUGIN_CACHE_DIR
// instead of its config directory's plugins, and seeds them from each
// directory of CLAUDE_CODE_PLUGIN_SEED_DIR, a leading ~ in either read as
// HOME (the agent's, in the sandbox); CLAUDE_CODE_ variables are passed. So
// both are setup paths: in a sandboxed run the user's, read-only, never the
// agent's HOME or workspace.
func TestClaudesPluginDirVariablesAreSetupPaths(t *testing.T) {
	for _, name := range []string{"CLAUDE_CODE_PLUGIN_CACHE_DIR", "CLAUDE_CODE_PLUGIN_SEED_DIR"} {
		if !info.Env.Allows(name) || !slices.Contains(info.Env.SetupPaths, name) {
			t.Errorf("%s: passed %v, setup paths %v; want it passed only as a setup path", name, info.Env.Allows(name), info.Env.SetupPaths)
		}
	}
}

// A sandboxed run leaves the git status out of Claude Code's prompt, so it
// runs no git status as it starts (TestRealClaudeRunsNoGitConfigAnAgentLeftInItsWorkspace),
// whatever the operator set; an unconfined run keeps it.
func TestASandboxedRunRunsNoGitStatusAsItStarts(t *testing.T) {
	r := run()
	r.Sandboxed = true
	inv, _ := CLI{}.Invocation(r)
	if !slices.Contains(inv.Env, "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=1") {
		t.Errorf("a sandboxed run's environment %q keeps the git status", inv.Env)
	}
	inv, _ = CLI{}.Invocation(run())
	if slices.ContainsFunc(inv.Env, func(kv string) bool { return strings.HasPrefix(kv, "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=") }) {
		t.Errorf("an unconfined run's environment %q leaves the git status out", inv.Env)
	}
}
