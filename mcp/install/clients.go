package install

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

// Clients are the clients install knows, in the order help lists them.
var Clients = []string{"claude-code", "codex", "cursor", "vscode", "gemini"}

// Scopes: project (the current directory, shared with the repository) or
// user (every project of this user).
const (
	ScopeProject = "project"
	ScopeUser    = "user"
)

// format of a client's configuration file.
type format int

const (
	formatJSON format = iota
	formatTOML
)

// target is where one client keeps one scope's configuration.
type target struct {
	client string
	scope  string
	path   string   // the configuration file
	key    []string // the server entry's path in it
	format format
	skills string // the directory skills are copied into
	// envStyle says how provider variables are passed: "" (the client
	// passes its own environment), "env_vars" (Codex's list of names),
	// "ref" (an env map of ${env:NAME} references) or "dollar" (Gemini
	// CLI's ${NAME} references).
	envStyle string
	// approval is what the user must do before a project-scoped server
	// runs; install never does it for them.
	approval string
	// notes are what the user should know of how the target was found.
	notes []string
}

// resolve finds a client's target for a scope.
func resolve(o *Options) (target, error) {
	home, dir := o.Home, o.Dir
	t := target{client: o.Client, scope: o.Scope}
	switch o.Client {
	case "claude-code":
		t.key = []string{"mcpServers", ServerName}
		if o.Scope == ScopeProject {
			t.path = filepath.Join(dir, ".mcp.json")
			t.skills = filepath.Join(dir, ".claude", "skills")
			t.approval = "Claude Code asks you to approve project servers from .mcp.json the next time it starts in this folder (`claude mcp list` shows it as pending until then); massgen-mcp does not approve it for you."
		} else {
			cfg, note := clientDir(o, "CLAUDE_CONFIG_DIR", "Claude Code")
			if note != "" {
				t.notes = append(t.notes, note)
			}
			if cfg != "" {
				t.path = filepath.Join(cfg, ".claude.json")
				t.skills = filepath.Join(cfg, "skills")
			} else {
				t.path = filepath.Join(home, ".claude.json")
				t.skills = filepath.Join(home, ".claude", "skills")
			}
		}
	case "codex":
		t.format, t.envStyle = formatTOML, "env_vars"
		t.key = []string{"mcp_servers", ServerName}
		if o.Scope == ScopeProject {
			t.path = filepath.Join(dir, ".codex", "config.toml")
			t.skills = filepath.Join(dir, ".agents", "skills")
			t.approval = "Codex reads .codex/config.toml only in a project you have trusted; massgen-mcp does not mark this one trusted for you."
		} else {
			ch, note, err := codexHome(o)
			if err != nil {
				return t, err
			}
			if note != "" {
				t.notes = append(t.notes, note)
			}
			t.path = filepath.Join(ch, "config.toml")
			t.skills = filepath.Join(ch, "skills")
		}
	case "cursor":
		t.envStyle = "ref"
		t.key = []string{"mcpServers", ServerName}
		base := filepath.Join(home, ".cursor")
		if o.Scope == ScopeProject {
			base = filepath.Join(dir, ".cursor")
			t.approval = "Cursor asks you to enable project servers from .cursor/mcp.json; massgen-mcp does not enable it for you."
		}
		t.path = filepath.Join(base, "mcp.json")
		t.skills = filepath.Join(base, "skills")
	case "vscode":
		t.envStyle = "ref"
		t.key = []string{"servers", ServerName}
		if o.Scope == ScopeProject {
			t.path = filepath.Join(dir, ".vscode", "mcp.json")
			t.skills = filepath.Join(dir, ".github", "skills")
			t.approval = "VS Code asks you to trust and start servers from .vscode/mcp.json; massgen-mcp does not trust it for you."
		} else {
			dir, note := vscodeUserDir(o)
			if note != "" {
				t.notes = append(t.notes, note)
			}
			t.path = filepath.Join(dir, "mcp.json")
			t.skills = filepath.Join(home, ".copilot", "skills")
		}
	case "gemini":
		// Gemini CLI withholds variables that look like keys from the
		// servers it starts, unless the entry's env names them.
		t.envStyle = "dollar"
		t.key = []string{"mcpServers", ServerName}
		var base string
		if o.Scope == ScopeProject {
			base = filepath.Join(dir, ".gemini")
			t.approval = "with folder trust on, Gemini CLI reads .gemini/settings.json only in a folder you have trusted (it asks when it starts there); massgen-mcp does not trust this one for you."
		} else {
			home, note := geminiHome(o)
			if note != "" {
				t.notes = append(t.notes, note)
			}
			base = filepath.Join(home, ".gemini")
			// Gemini CLI 0.61 lists a user-level server as "Disabled" in
			// a folder not trusted (seen in e2e/clients.sh): without this
			// the install looks broken.
			t.approval = "with folder trust on, Gemini CLI starts even user-level servers only in folders you have trusted (it asks when it starts in one); massgen-mcp does not trust any for you."
		}
		t.path = filepath.Join(base, "settings.json")
		t.skills = filepath.Join(base, "skills")
	default:
		return t, fmt.Errorf("unknown client %q; use one of %s", o.Client, strings.Join(Clients, ", "))
	}
	return t, nil
}

// vscodeUserDir is VS Code's user settings directory, found as VS Code's
// getUserDataPath finds it: a portable install's user-data
// ($VSCODE_PORTABLE, which its terminal inherits), else $VSCODE_APPDATA/Code,
// else the platform's. A relative value is not ignored, as the XDG spec
// would have it for XDG_CONFIG_HOME: VS Code resolves it against the
// directory it was launched from, so clientDir takes it against the
// project's.
func vscodeUserDir(o *Options) (dir, note string) {
	if p, note := clientDir(o, "VSCODE_PORTABLE", "VS Code"); p != "" {
		return filepath.Join(p, "user-data", "User"), note
	}
	if a, note := clientDir(o, "VSCODE_APPDATA", "VS Code"); a != "" {
		return filepath.Join(a, "Code", "User"), note
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(o.Home, "Library", "Application Support", "Code", "User"), ""
	}
	if x, note := clientDir(o, "XDG_CONFIG_HOME", "VS Code"); x != "" {
		return filepath.Join(x, "Code", "User"), note
	}
	return filepath.Join(o.Home, ".config", "Code", "User"), ""
}

// geminiHome is the home Gemini CLI keeps .gemini in: $GEMINI_CLI_HOME (a
// relative one taken against the project directory, as Gemini CLI started
// there takes it), else the user's.
func geminiHome(o *Options) (home, note string) {
	if h, note := clientDir(o, "GEMINI_CLI_HOME", "Gemini CLI"); h != "" {
		return h, note
	}
	return o.Home, ""
}
