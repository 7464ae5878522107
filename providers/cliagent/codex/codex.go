package codex

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// Backend is the backend name.
const Backend = "codex"

// CLI is OpenAI's Codex CLI.
type CLI struct{}

// info is Codex's facts (research/cli-agents.md and its docs).
var info = cliagent.Info{
	Backend:      Backend,
	Binary:       "codex",
	BinaryEnv:    "CODEX_BIN",
	Package:      "@openai/codex@0.171.0",
	ConfigDir:    ".codex",
	ConfigDirEnv: "CODEX_HOME",
	// Its ChatGPT login or stored key, and the user's config (a custom
	// model provider), instructions, prompts and exec rules, and where it
	// loads hooks from: hooks.json (0.171 reads one beside each layer's
	// config.toml and runs its commands outside its own sandbox, and a run
	// with the step's rules passes --dangerously-bypass-hook-trust, which
	// skips the trust review of every hook), hooks (their scripts, by
	// convention) and plugins (plugins/cache: a plugin's hooks/hooks.json
	// and MCP servers). An agent that could write them would run code of
	// its choosing in its next run
	// (TestRealCodexRunsNoHookAnAgentPlantedInItsConfigDir). So are its
	// skills, which 0.171 offers every run from CODEX_HOME/skills (and
	// .system in it) and from ~/.agents/skills (HomeSetup), each a
	// SKILL.md telling the model what to run and the scripts beside it
	// (TestRealCodexLoadsNoSkillAnAgentPlantedForItsNextRun); read-only,
	// the bundled skills it would install into skills/.system are left
	// out (Invocation). And its custom agents (agents/*.toml), each a
	// config layer of its own, MCP servers included. Of its state only
	// sessions (the rollouts exec resume reads: with only it kept 0.171
	// resumes a thread) outlives a run; its state, history, memories and
	// logs databases, shell snapshots and installation id are made afresh.
	LoginFiles:   []string{"auth.json"},
	LoginRules:   loginRules,
	SetupFiles:   []string{"config.toml", "AGENTS.md", "AGENTS.override.md", "prompts", "rules", "hooks.json", "hooks", "plugins", "skills", "agents"},
	HomeSetup:    []string{".agents/skills"},
	KeptDirs:     []string{"sessions"},
	PriceBackend: "openai",
	Env: cliagent.EnvPolicy{
		// Its auth (OPENAI_API_KEY, CODEX_API_KEY, a ChatGPT login in
		// CODEX_HOME) and its endpoint and switches (OPENAI_BASE_URL,
		// OPENAI_ORG_ID, CODEX_SANDBOX_*, …). A custom provider of the
		// user's config.toml whose env_key has another name needs that
		// variable named CODEX_* or OPENAI_*.
		Prefixes: []string{"OPENAI_", "CODEX_"},
		Names:    []string{"RUST_LOG", "SSL_CERT_FILE"},
		Defaults: map[string]string{"CODEX_DISABLE_UPDATE_CHECK": "1"},
	},
}

// Info implements cliagent.CLI.
func (CLI) Info() cliagent.Info { return info }

// NewParser implements cliagent.CLI.
func (CLI) NewParser() cliagent.Parser { return &Parser{} }

// Invocation implements cliagent.CLI: one `codex exec --json` run (or
// `codex exec … resume <thread>`), the prompt on stdin (`-`), never in argv.
//
// The workflow server is given per run with -c, approved for use without a
// prompt (`default_tools_approval_mode`), which `approval_policy = "never"`
// would otherwise refuse. Codex's own sandbox is workspace-write: the
// workspace and TMPDIR writable, the rest read-only; inside this project's
// sandbox it still applies (it nests). Update checks, plugin syncs and
// analytics are off; the user's own config.toml (a custom model provider,
// say) keeps applying.
func (CLI) Invocation(r cliagent.Run) (cliagent.Invocation, error) {
	if strings.TrimSpace(r.Prompt) == "" {
		return cliagent.Invocation{}, fmt.Errorf("%s: the step has no prompt", Backend)
	}
	srv := "mcp_servers." + r.Workflow.Name
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	args = append(args, permissionArgs(r)...)
	args = append(args,
		"--cd", r.Workdir,
		"-c", `approval_policy="never"`,
		"-c", srv+".command="+tomlString(r.Workflow.Command),
		"-c", srv+".args="+tomlArray(r.Workflow.Args),
		"-c", srv+`.default_tools_approval_mode="approve"`,
		"-c", srv+".startup_timeout_sec=30",
		// Required: Codex waits for a server it is not told is required
		// only a short grace and then begins the turn without its tools,
		// a paid call that can neither answer nor vote (a slow-starting
		// relay on a loaded machine). Required, it waits up to the
		// startup timeout and fails the run if the server never comes up.
		"-c", srv+".required=true",
		// A team MCP server's call runs in the Step for up to its own two
		// minutes; Codex's default wait (60 s) would give up first.
		"-c", srv+".tool_timeout_sec=180",
		"-c", "check_for_update_on_startup=false",
		"-c", "features.plugins=false",
		"-c", "analytics.enabled=false",
	)
	if r.Sandboxed {
		// The skills directory is the user's, read-only: the install of
		// the bundled skills into skills/.system, tried at every start,
		// would fail and log an ERROR four times a run.
		args = append(args, "-c", "skills.bundled.enabled=false")
	}
	if r.Model != "" {
		args = append(args, "--model", r.Model)
	}
	if r.Resume != "" {
		args = append(args, "resume", r.Resume)
	}
	args = append(args, "-")
	return cliagent.Invocation{Args: args, Stdin: prompt(r)}, nil
}

// prompt is the run's stdin: the step's instructions, then its prompt.
// Codex takes no extra system prompt on the command line but a whole
// replacement, so the instructions lead the user turn, every run (a resumed
// run's peers and tools are the new step's).
func prompt(r cliagent.Run) string {
	if strings.TrimSpace(r.System) == "" {
		return r.Prompt
	}
	return "<instructions>\n" + strings.TrimSpace(r.System) + "\n</instructions>\n\n" + r.Prompt
}

// tomlString writes s as a TOML basic string (what -c values parse as).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}
