package claudecode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// Backend is the backend name.
const Backend = "claude_code"

// CLI is Claude Code.
type CLI struct{}

// info is Claude Code's facts (research/cli-agents.md and its docs).
var info = cliagent.Info{
	Backend:      Backend,
	Binary:       "claude",
	BinaryEnv:    "CLAUDE_BIN",
	Package:      "@anthropic-ai/claude-code@2.1.197",
	ConfigDir:    ".claude",
	ConfigDirEnv: "CLAUDE_CONFIG_DIR",
	// Its login on Linux (elsewhere the system keychain, out of reach of
	// the sandbox anyway), and the user's setup a run with their own
	// (UserSetup) reads; --bare ignores it. Its plugins (their hooks and
	// MCP servers run in every run, and a PreToolUse hook's "allow"
	// skips the permission prompt tool) and hooks (where hooks of
	// settings.json live by convention, ~/.claude/hooks, which in the
	// sandbox is the agent's) are setup too: an agent that could write
	// them would grant its next run what the engine refuses
	// (TestRealClaudeRunsNoPluginAnAgentPlantedInItsConfigDir). 2.1.197
	// read-only still loads the user's plugins and runs (its migration's
	// rename and .orphaned_at unlink fail with EROFS, logged only); its
	// registry names each install by the user's absolute path. So are its
	// rules (instructions of every run, as CLAUDE.md's), workflows
	// (JavaScript it runs), and cowork_settings.json and cowork_plugins,
	// which it reads instead of settings.json and plugins when
	// CLAUDE_CODE_USE_COWORK_PLUGINS is set (a CLAUDE_CODE_ variable, so
	// passed). Its ide is never the user's (their editors' lock files,
	// each with a port and auth token an agent sharing the network could
	// drive the editor with) but empty and read-only: a lock an agent
	// planted would point its next run at a server of its choosing. Of
	// the rest of the directory, its state, only projects (sessions and
	// their transcripts, which --resume reads: with only it kept 2.1.197
	// resumes) outlives a run; session-env (what a session's hooks wrote
	// to CLAUDE_ENV_FILE, sourced before each Bash command of that session,
	// TestRealClaudeSourcesNoSessionEnvScriptAnAgentLeftForItsNextRun),
	// .claude.json (TestRealClaudeIgnoresAllowRulesAnAgentPlantedInItsClaudeJSON),
	// history, caches, backups, todos, plans, shell snapshots, tasks,
	// teams and jobs are made afresh each run.
	LoginFiles:   []string{".credentials.json"},
	LoginRules:   loginRules,
	SetupFiles:   []string{"settings.json", "CLAUDE.md", "agents", "commands", "skills", "output-styles", "plugins", "hooks", "rules", "workflows", "cowork_settings.json", "cowork_plugins"},
	SetupAtPath:  []string{"plugins", "cowork_plugins"},
	EmptyFiles:   []string{"ide"},
	KeptDirs:     []string{"projects"},
	PriceBackend: "claude",
	Env: cliagent.EnvPolicy{
		// Its auth and endpoint (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
		// ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, …) and its own switches
		// (CLAUDE_CODE_MAX_RETRIES, CLAUDE_CODE_USE_BEDROCK, …).
		Prefixes: []string{"ANTHROPIC_", "CLAUDE_CODE_"},
		// Where it loads plugins from instead of its config directory's
		// plugins, and seeds them from (a list), a leading ~ read as HOME:
		// in the sandbox the user's, read-only, never the agent's HOME
		// (TestClaudesPluginDirVariablesAreSetupPaths). Of the other
		// CLAUDE_CODE_ variables naming a path in 2.1.197,
		// CLAUDE_CODE_MANAGED_SETTINGS_PATH and CLAUDE_CODE_REMOTE_SETTINGS_PATH
		// are read by nothing (the latter's reader returns nothing in the
		// build), and the rest name where it writes (TMPDIR, debug logs,
		// memory, its own state as its transcripts are) or a program it
		// runs (SHELL, SHELL_PREFIX), not setup.
		SetupPaths: []string{"CLAUDE_CODE_PLUGIN_CACHE_DIR", "CLAUDE_CODE_PLUGIN_SEED_DIR"},
		Names: []string{
			"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
			"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING", "DISABLE_BUG_COMMAND",
			"DISABLE_COST_WARNINGS", "DISABLE_NON_ESSENTIAL_MODEL_CALLS", "MCP_TIMEOUT", "MCP_TOOL_TIMEOUT",
			"MCP_CONNECTION_NONBLOCKING", "MCP_CONNECT_TIMEOUT_MS",
			"BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "MAX_THINKING_TOKENS", "API_TIMEOUT_MS",
		},
		// A team member never updates itself mid-run nor reports home.
		// Nor does it begin its turn without the workflow server, whose
		// tools are the only way it can answer or vote: -p connects
		// --mcp-config servers in the background unless
		// MCP_CONNECTION_NONBLOCKING is 0, and then waits only
		// MCP_CONNECT_TIMEOUT_MS (5 s by default) for them, which a loaded
		// machine outlasts; 30 s is MCP_TIMEOUT's default, as long as it
		// lets a server start.
		Defaults: map[string]string{
			"MCP_CONNECTION_NONBLOCKING":               "0",
			"MCP_CONNECT_TIMEOUT_MS":                   "30000",
			"DISABLE_AUTOUPDATER":                      "1",
			"DISABLE_TELEMETRY":                        "1",
			"DISABLE_ERROR_REPORTING":                  "1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		},
	},
}

// Info implements cliagent.CLI.
func (CLI) Info() cliagent.Info { return info }

// NewParser implements cliagent.CLI.
func (CLI) NewParser() cliagent.Parser { return &Parser{} }

// Tool names as Claude Code calls the workflow server's tools.
func mcpTool(server, tool string) string { return "mcp__" + server + "__" + tool }

// Invocation implements cliagent.CLI: one `claude -p` run, the prompt on
// stdin (never in argv, where other users' ps could read it).
func (CLI) Invocation(r cliagent.Run) (cliagent.Invocation, error) {
	cfg := map[string]any{"mcpServers": map[string]any{
		r.Workflow.Name: map[string]any{"type": "stdio", "command": r.Workflow.Command, "args": r.Workflow.Args},
	}}
	mcpJSON, err := json.Marshal(cfg)
	if err != nil {
		return cliagent.Invocation{}, err
	}
	allowed := make([]string, 0, len(r.WorkflowTools)+1)
	for _, t := range r.WorkflowTools {
		allowed = append(allowed, mcpTool(r.Workflow.Name, t))
	}
	if r.Sandboxed && r.Permissions == nil {
		// acceptEdits allows Read, Edit and Write but not the shell; inside
		// the sandbox the shell is confined like every other command. With
		// permission rules the prompt tool decides it (permissions.go).
		allowed = append(allowed, "Bash")
	}
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	args = append(args, permissionArgs(r)...)
	args = append(args,
		"--strict-mcp-config", "--mcp-config", r.RunDir+"/mcp.json",
		"--append-system-prompt-file", r.RunDir+"/system.md",
		"--allowedTools", strings.Join(allowed, ","),
		// The user's settings only: the workspace's .claude/settings.json
		// and settings.local.json are the agent's to write, and loaded by
		// a later run there their allow rules would pass the step's
		// permission gate.
		"--setting-sources", "user",
	)
	if !r.UserSetup {
		args = append(args, "--bare")
	}
	if r.Model != "" {
		args = append(args, "--model", r.Model)
	}
	if r.Resume != "" {
		args = append(args, "--resume", r.Resume)
	}
	for _, d := range r.ReadDirs {
		args = append(args, "--add-dir", d)
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return cliagent.Invocation{}, fmt.Errorf("%s: the step has no prompt", Backend)
	}
	inv := cliagent.Invocation{
		Args:  args,
		Files: map[string][]byte{"mcp.json": mcpJSON, "system.md": []byte(r.System)},
		Stdin: r.Prompt,
	}
	if r.Sandboxed {
		// Its prompt's git status is git status run in the workspace as
		// the run starts, which runs the repository's core.fsmonitor and
		// filter drivers: the workspace (its .git, or a .git of the
		// agent's in place of a worktree's .git file) is the agent's to
		// write, so what it set there in one run would run, unjudged, as
		// its next started (TestRealClaudeRunsNoGitConfigAnAgentLeftInItsWorkspace).
		// Set after the operator's variables, so it holds.
		// Its auto memory (projects/<project>/memory/MEMORY.md) is in the
		// kept projects directory, the agent's to write, and a run
		// without --bare puts it in its system prompt as the user's
		// instructions, which the model must follow: what an agent's
		// command wrote there steered its next run
		// (TestRealClaudeLoadsNoAutoMemoryAnAgentLeftInItsProjects).
		inv.Env = append(inv.Env, "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1")
	}
	return inv, nil
}
