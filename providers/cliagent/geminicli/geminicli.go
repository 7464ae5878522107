package geminicli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// Backend is the backend name.
const Backend = "gemini_cli"

// CLI is Google's Gemini CLI.
type CLI struct{}

// info is Gemini CLI's facts (research/cli-agents.md and its docs). Its
// config directory has no variable of its own: it is $HOME/.gemini (or
// $GEMINI_CLI_HOME/.gemini, which each run sets; see Invocation).
var info = cliagent.Info{
	Backend:      Backend,
	Binary:       "gemini",
	BinaryEnv:    "GEMINI_BIN",
	Package:      "@google/gemini-cli@0.61.0",
	ConfigDir:    ".gemini",
	LoginRules:   loginRules,
	PriceBackend: "gemini",
	Env: cliagent.EnvPolicy{
		// Its auth (a Gemini API key, Vertex AI, a Google login in
		// ~/.gemini), its endpoint and its model.
		Names: []string{
			"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_MODEL",
			"GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
			"GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_ACCESS_TOKEN", "NO_BROWSER",
		},
		// Never relaunch itself with a larger heap (a second node process
		// under the same group, for no gain in a headless run); no colour.
		Defaults: map[string]string{"GEMINI_CLI_NO_RELAUNCH": "true", "NO_COLOR": "1"},
	},
}

// Info implements cliagent.CLI.
func (CLI) Info() cliagent.Info { return info }

// NewParser implements cliagent.CLI.
func (CLI) NewParser() cliagent.Parser { return &Parser{} }

// geminiHome is the CLI's home for one run (GEMINI_CLI_HOME), in the run
// directory: its .gemini holds the generated settings and a copy of the
// user's login.
const geminiHome = "gemini-home"

// loginFiles are what a Google login leaves in ~/.gemini.
var loginFiles = []string{"oauth_creds.json", "google_accounts.json"}

// Invocation implements cliagent.CLI: one `gemini -p` run, the prompt on
// stdin (-p "" adds nothing to it), never in argv.
//
// The CLI reads per-user settings from $GEMINI_CLI_HOME/.gemini; a system
// settings file (GEMINI_CLI_SYSTEM_SETTINGS_PATH) it accepts only when root
// owns it and every parent. So each run gets its own home in the run
// directory, outside the workspace: settings naming the workflow server,
// with auto-update, usage statistics and telemetry off and the CLI's API
// attempts bounded, plus the user's own auth choice and a copy of their
// Google login from their ~/.gemini (nothing else of it: their MCP servers
// never reach a step; --allowed-mcp-server-names keeps it so). Edits are
// approved (auto_edit); the shell only inside the sandbox (yolo), where it
// is confined like every command.
func (CLI) Invocation(r cliagent.Run) (cliagent.Invocation, error) {
	if strings.TrimSpace(r.Prompt) == "" {
		return cliagent.Invocation{}, fmt.Errorf("%s: the step has no prompt", Backend)
	}
	settings := map[string]any{
		"mcpServers": map[string]any{
			r.Workflow.Name: map[string]any{"command": r.Workflow.Command, "args": r.Workflow.Args, "trust": true},
		},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "maxAttempts": 3},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
	}
	// Folder trust on (0.61's default, said here so a change of default
	// does not undo it): the CLI merges its settings when it starts, before
	// --skip-trust trusts the session, so the workspace's
	// .gemini/settings.json, which the agent may write (hooks off, a
	// workflow server of its own), is not applied to its next run.
	security := map[string]any{"folderTrust": map[string]any{"enabled": true}}
	if r.Permissions != nil && len(r.Permissions.Hook) > 0 {
		settings["hooks"] = hookSettings(r.Permissions)
	}
	files, logins := map[string][]byte{}, map[string]string{}
	if auth := userAuth(r.HostConfigDir); auth != nil {
		security["auth"] = auth
	}
	settings["security"] = security
	for _, name := range loginFiles {
		if r.HostConfigDir == "" {
			break
		}
		user := filepath.Join(r.HostConfigDir, name)
		if data, err := os.ReadFile(user); err == nil {
			// The CLI refreshes its token into the copy, which is copied
			// back (a rotated refresh token must reach the user's);
			// settings.json, with the permission hook, stays pinned
			// read-only.
			files[filepath.Join(geminiHome, ".gemini", name)] = data
			logins[filepath.Join(geminiHome, ".gemini", name)] = user
		}
	}
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return cliagent.Invocation{}, err
	}
	files[filepath.Join(geminiHome, ".gemini", "settings.json")] = data
	mode := "auto_edit"
	if r.Sandboxed {
		mode = "yolo"
	}
	args := []string{"-p", "", "--output-format", "stream-json", "--approval-mode", mode,
		"--skip-trust", "--allowed-mcp-server-names", r.Workflow.Name}
	if r.Model != "" {
		args = append(args, "--model", r.Model)
	}
	if len(r.ReadDirs) > 0 {
		args = append(args, "--include-directories", strings.Join(r.ReadDirs, ","))
	}
	return cliagent.Invocation{
		Args:   args,
		Files:  files,
		Logins: logins,
		Env:    []string{"GEMINI_CLI_HOME=" + filepath.Join(r.RunDir, geminiHome)},
		Stdin:  prompt(r),
	}, nil
}

// userAuth is the security.auth block of the user's settings.json (their
// choice of login, API key or Vertex AI), or nil.
func userAuth(configDir string) map[string]any {
	if configDir == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(configDir, "settings.json"))
	if err != nil {
		return nil
	}
	var s struct {
		Security struct {
			Auth map[string]any `json:"auth"`
		} `json:"security"`
	}
	if json.Unmarshal(data, &s) != nil || len(s.Security.Auth) == 0 {
		return nil
	}
	return s.Security.Auth
}

// prompt is the run's stdin: the step's instructions, then its prompt (the
// CLI's only system-prompt option replaces its own whole).
func prompt(r cliagent.Run) string {
	if strings.TrimSpace(r.System) == "" {
		return r.Prompt
	}
	return "<instructions>\n" + strings.TrimSpace(r.System) + "\n</instructions>\n\n" + r.Prompt
}
