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
// config directory has no variable of its own: it is $HOME/.gemini, and the
// framework's per-agent HOME holds it.
var info = cliagent.Info{
	Backend:      Backend,
	Binary:       "gemini",
	BinaryEnv:    "GEMINI_BIN",
	ConfigDir:    ".gemini",
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

// settingsFile is the generated settings' name in the run directory.
const settingsFile = "gemini-settings.json"

// Invocation implements cliagent.CLI: one `gemini -p` run, the prompt on
// stdin (-p "" adds nothing to it), never in argv.
//
// The workflow server comes in a generated settings file in the run
// directory, outside the workspace, passed as the system settings
// (GEMINI_CLI_SYSTEM_SETTINGS_PATH), which override the user's: it also
// turns off auto-update, usage statistics and telemetry and bounds the
// CLI's API attempts. The user's own settings (their login, say) still
// apply below it; --allowed-mcp-server-names keeps their MCP servers out of
// the step. Edits are approved (auto_edit); the shell only inside the
// sandbox (yolo), where it is confined like every command.
func (CLI) Invocation(r cliagent.Run) (cliagent.Invocation, error) {
	if strings.TrimSpace(r.Prompt) == "" {
		return cliagent.Invocation{}, fmt.Errorf("%s: the step has no prompt", Backend)
	}
	if !r.Sandboxed {
		// The CLI skips a settings file any of whose parents others can
		// write (it would then run without its workflow tools).
		if dir, bad := openParent(r.RunDir); bad {
			return cliagent.Invocation{}, fmt.Errorf("%s: its generated settings would be under %s, which other users can write, and Gemini CLI refuses such a file; keep the CLI agents' directory (and TMPDIR) under a directory only you can write", Backend, dir)
		}
	}
	settings, err := json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{
			r.Workflow.Name: map[string]any{"command": r.Workflow.Command, "args": r.Workflow.Args, "trust": true},
		},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "maxAttempts": 3},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
	}, "", "  ")
	if err != nil {
		return cliagent.Invocation{}, err
	}
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
	env := []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + filepath.Join(r.RunDir, settingsFile)}
	if filepath.Base(r.ConfigDir) == info.ConfigDir {
		// The CLI finds .gemini under GEMINI_CLI_HOME, else HOME: point it
		// at the config directory the framework chose (the user's login,
		// unsandboxed; the agent's HOME holds it in the sandbox).
		env = append(env, "GEMINI_CLI_HOME="+filepath.Dir(r.ConfigDir))
	}
	return cliagent.Invocation{
		Args:  args,
		Files: map[string][]byte{settingsFile: settings},
		Env:   env,
		Stdin: prompt(r),
	}, nil
}

// prompt is the run's stdin: the step's instructions, then its prompt (the
// CLI's only system-prompt option replaces its own whole).
func prompt(r cliagent.Run) string {
	if strings.TrimSpace(r.System) == "" {
		return r.Prompt
	}
	return "<instructions>\n" + strings.TrimSpace(r.System) + "\n</instructions>\n\n" + r.Prompt
}

// openParent finds the first directory above path that users other than
// its owner may write (as /tmp); bad is false when there is none.
func openParent(path string) (dir string, bad bool) {
	for d := filepath.Dir(filepath.Clean(path)); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o022 != 0 {
			return d, true
		}
		if d == filepath.Dir(d) {
			return "", false
		}
	}
}
