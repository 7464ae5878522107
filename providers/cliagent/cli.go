package cliagent

import (
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// CLI is one coding-agent CLI: its facts, how to invoke one run, and how to
// read the run's stream. Implementations are stateless; a Provider calls
// them from many steps at once.
type CLI interface {
	Info() Info
	// Invocation builds one run of the CLI: its arguments (after the
	// binary), the configs to generate, the prompt on stdin.
	Invocation(r Run) (Invocation, error)
	// NewParser reads one run's stdout.
	NewParser() Parser
}

// Info are a CLI's facts.
type Info struct {
	Backend   string // the backend name, e.g. "claude_code"
	Binary    string // the program on PATH, e.g. "claude"
	BinaryEnv string // the variable naming the binary instead, e.g. "CLAUDE_BIN"
	// Package is the npm package that installs the binary, at the version
	// this build is tested with (e2e/install-clis.sh installs the same),
	// e.g. "@anthropic-ai/claude-code@2.1.197": what a user missing the
	// CLI is told to install.
	Package string
	// ConfigDir is the CLI's own configuration directory under HOME (e.g.
	// ".claude": logins and their token refreshes), and ConfigDirEnv the
	// variable that moves it (e.g. "CLAUDE_CONFIG_DIR"). It is the only part
	// of the user's HOME an agent sees, and in the sandbox never writable:
	// a sandboxed agent gets a private one (configdir.go).
	ConfigDir    string
	ConfigDirEnv string
	// LoginFiles are the JSON files of ConfigDir that hold the user's
	// login (".credentials.json"): copied into a sandboxed agent's private
	// config directory before each run, and back to the user's once the
	// CLI refreshed them.
	LoginFiles []string
	// LoginRules say, by file name (of LoginFiles and of Invocation.Logins,
	// the last element), what a refresh of the login may change and which
	// account it is of (LoginRule): a refresh of another account, or of
	// more than its tokens, is not copied back. A login file with no rule
	// is never copied back.
	LoginRules map[string]LoginRule
	// SetupFiles are the user's own setup in ConfigDir (settings,
	// instructions, a config file, and every directory the CLI loads code
	// from: plugins, hooks): shown read-only in a sandboxed agent's
	// private config directory, at the same names. A name left out is the
	// agent's to write, and what the CLI loads from it its next run.
	SetupFiles []string
	// SetupAtPath are those of SetupFiles whose content names itself by
	// the user's absolute path (Claude Code's plugin registry records each
	// install's directory): shown read-only at that path too, where the
	// sandbox would otherwise show nothing.
	SetupAtPath []string
	// EmptyFiles are names in ConfigDir the CLI acts on that must never
	// show the user's (Claude Code's "ide": their editors' lock files,
	// each with a port and auth token): an empty read-only one in a
	// sandboxed agent's private config directory, whether or not the user
	// has it, so one an agent planted cannot point its next run elsewhere.
	EmptyFiles []string
	// KeptDirs are the directories of ConfigDir that a sandboxed agent's
	// next run needs from its last (Claude Code's "projects", its session
	// transcripts, which --resume reads; Codex's "sessions", its rollouts):
	// the only part of the agent's HOME that outlives a sandboxed run.
	// Everything else in that HOME is made afresh for each run.
	KeptDirs []string
	// HomeSetup are the user's setup the CLI reads from HOME outside
	// ConfigDir, as paths under HOME (Codex's ".agents/skills"): shown
	// read-only from the user's HOME at the same path in a sandboxed
	// agent's (an empty directory when the user has none), what an
	// earlier run left there removed, and the path's first directory bound
	// over itself so the CLI cannot rename it away and make its own.
	HomeSetup []string
	// PriceBackend is the API backend whose price table prices the CLI's
	// tokens when the CLI reports no cost (e.g. "claude").
	PriceBackend string
	// Env says which of the server's variables the CLI may see.
	Env EnvPolicy
}

// EnvPolicy is a CLI's part of the environment allow-list: its own auth,
// base-URL and configuration variables, its documented switches. The
// framework adds PATH, locale and proxy settings, and sets HOME, TMPDIR and
// the config directory variable itself.
type EnvPolicy struct {
	Names    []string // passed when set
	Prefixes []string // every variable with one of these prefixes is passed
	// Defaults are set unless the server's environment sets them (telemetry
	// and update checks off).
	Defaults map[string]string
	// SetupPaths are passed variables whose value is where the CLI loads
	// setup from, outside its config directory (Claude Code's
	// CLAUDE_CODE_PLUGIN_CACHE_DIR): a path, or a list of them.
	SetupPaths []string
}

// Run is one run of a CLI, with every path as the CLI sees it (inside the
// sandbox, where there is one).
type Run struct {
	Model  string
	Prompt string // the user turn
	System string // instructions to add to the CLI's own system prompt
	// Resume is the CLI's session to continue ("" starts one).
	Resume    string
	Workdir   string // the working directory: the agent's live workspace
	Home      string // the per-agent HOME
	ConfigDir string // the CLI's config directory (ConfigDirEnv's value)
	// HostConfigDir is the user's own config directory where this process
	// reads it (outside the sandbox), for a CLI that copies from it; the
	// run's own when the user has none. In the sandbox it is not ConfigDir,
	// the agent's private one.
	HostConfigDir string
	// RunDir is a private directory outside the workspace for generated
	// configs (Invocation.Files are written there).
	RunDir string
	// ReadDirs are directories the agent may read: peers' snapshots and
	// context directories.
	ReadDirs []string
	// Workflow is the MCP server to give the CLI for this run; its tools
	// are WorkflowTools (new_answer, vote, and the served names of the
	// team's MCP server tools).
	Workflow      MCPServer
	WorkflowTools []string
	// Sandboxed says the CLI runs inside the sandbox, so its shell tool can
	// be allowed.
	Sandboxed bool
	// UserSetup asks for the user's own CLI setup (for Claude Code: no
	// --bare, so a subscription login, CLAUDE.md and settings apply).
	UserSetup bool
	// Permissions are the agent's permission rules as the CLI is told
	// them (a Gatekeeper's runs only); nil: none, the CLI's usual settings.
	Permissions *Permissions
}

// MCPServer is a stdio MCP server as CLIs' configs name one.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
}

// Invocation is what a CLI needs for one run.
type Invocation struct {
	Args []string
	// Files are generated configs, by path relative to Run.RunDir (a
	// subdirectory is created), written there before the run starts (never
	// into the workspace). In the sandbox each is pinned read-only
	// (pinRunFiles) unless Writable names it.
	Files map[string][]byte
	// Writable are the Files the CLI itself rewrites during the run (a
	// copied login whose token it refreshes); none may decide what it is
	// permitted.
	Writable []string
	// Logins are the Files that copy the user's login (by name, to the
	// user's file, as this process sees it, they copy): the CLI may
	// refresh them (they are writable, as Writable ones are), and once it
	// ended a refreshed one is copied back to the user's file under the
	// rules a sandboxed agent's config directory's login is
	// (configdir.go), so a refresh token rotated in the run is not lost.
	Logins map[string]string
	// Env holds extra KEY=VALUE variables for this run.
	Env []string
	// Stdin is the CLI's standard input (the prompt, for CLIs that read it
	// there); empty is /dev/null.
	Stdin string
	// ReadOnly are further host paths the run needs to see inside the
	// sandbox, at the same path (a runtime such as node outside /usr).
	ReadOnly []string
}

// Parser reads one run's stream, a line at a time, on one goroutine.
type Parser interface {
	// Line reads one line of stdout. An error means the line is not the
	// CLI's stream; the run is then an error unless a workflow call landed.
	Line(line []byte, ev Events) error
	// Outcome is what the stream reported, after its last line.
	Outcome() Outcome
}

// Events hears what a stream reports as it happens.
type Events interface {
	// Text is a piece of the model's text as it streams.
	Text(delta string)
	// Tool is one tool call, command, file change or MCP call of the run
	// (Kind "tool", "command", "file_change" or "mcp"), once it finished;
	// calls of the workflow server are not reported here.
	Tool(rec providers.ToolRecord)
	// Retry says the CLI retries its API after wait.
	Retry(wait time.Duration, err error)
	// Call says another model call of the run began, where the stream
	// tells its calls apart (an assistant message of a new id, the first
	// model event after tool results). Each sent the run's prompt again,
	// so while the stream reports no input the step counts its estimate
	// once a call; a stream that never says counts it once.
	Call()
	// Usage is the run's usage so far, whenever the stream tells it (after
	// each model call where it does, else at the turn's end), the part of
	// its input written to the prompt cache (zero where the stream does
	// not say), and the model that spent it ("" when the stream does not
	// say). The step's limits are checked against it as it arrives.
	Usage(run providers.Usage, writes CacheWrites, model string)
}

// CacheWrites are the input tokens of a run written to the prompt cache,
// by how long they are kept there (Anthropic's 5 minutes and 1 hour). They
// are counted in its Usage's Input, and the price table bills them at the
// cache-write prices, above input (pricing.CostWithCacheWrites).
type CacheWrites struct {
	FiveMin, OneHour int64
}

// Add sums two runs' cache writes.
func (w CacheWrites) Add(o CacheWrites) CacheWrites {
	return CacheWrites{FiveMin: w.FiveMin + o.FiveMin, OneHour: w.OneHour + o.OneHour}
}

// Outcome is what a run's stream reported.
type Outcome struct {
	SessionID string // the CLI's session, to resume
	Final     string // the final message
	// Usage is the run's tokens (cached and reasoning included); CostUSD is
	// the CLI's own figure, nil when it gives none.
	Usage providers.Usage
	// CacheWrites is the part of Usage's input written to the prompt
	// cache, which the price table bills above input when CostUSD is nil.
	CacheWrites CacheWrites
	// Subscription says the CLI is logged in with a subscription, so its
	// cost figure is an estimate at list prices, not a charge.
	Subscription bool
	// Error is the CLI's own error message, when the stream reports one;
	// Status the API's HTTP status behind it, when known.
	Error  string
	Status int
	// Done says the stream's final event was seen.
	Done bool
	// Model is the model the stream last named ("" if none), which prices
	// the run when the agent was given none and the CLI gave no cost; the
	// Provider sets the one the CLI's config names (ConfiguredModel) when
	// the stream named none.
	Model string
}

// ConfiguredModel is implemented by a CLI whose stream names no model but
// whose config file names the one it runs when given none (Codex's
// config.toml model). A run of an agent given no model is priced by it
// when its stream names none, so a cost budget binds on it.
type ConfiguredModel interface {
	// ConfigModel is the model the config in configDir (the CLI's config
	// directory as this process sees it) names, "" if none.
	ConfigModel(configDir string) string
}
