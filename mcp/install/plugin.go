package install

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// PluginName is the Claude Code plugin this repository ships
// (.claude-plugin/plugin.json). Its server, also named massgen, shows in
// Claude Code as plugin:massgen:massgen.
const PluginName = "massgen"

// PluginEnv is set by the plugin's manifest on the server Claude Code
// starts for it, so that server knows it came from the plugin (Claude Code
// itself tells a server nothing of where it was configured).
const PluginEnv = "MASSGEN_MCP_PLUGIN"

// ErrPluginEnabled is an install into Claude Code refused because the
// massgen plugin is enabled there: its server and this entry would be two
// identical servers, every tool offered twice.
var ErrPluginEnabled = errors.New("the massgen plugin already runs this server in Claude Code")

// pluginSite is one place Claude Code enables (or disables) the plugin: the
// plugin's id (massgen@marketplace) and the settings file that says so.
type pluginSite struct {
	id, path string
	enabled  bool
}

// claudeDir is Claude Code's own directory: $CLAUDE_CONFIG_DIR (a relative
// one the project's, as for .claude.json), else ~/.claude. It holds
// settings.json and plugins/.
func claudeDir(o *Options) string {
	if d, _ := clientDir(o, "CLAUDE_CONFIG_DIR", "Claude Code"); d != "" {
		return d
	}
	return filepath.Join(o.Home, ".claude")
}

// pluginSites reads where the massgen plugin is enabled or disabled for a
// session in o.Dir: the user's settings, then the project's shared and
// local ones (enabledPlugins, keyed by massgen@marketplace — any
// marketplace, since the repository can be added under another name).
// Files that are missing or do not parse say nothing.
func pluginSites(o *Options) []pluginSite {
	var sites []pluginSite
	for _, path := range []string{
		filepath.Join(claudeDir(o), "settings.json"),
		filepath.Join(o.Dir, ".claude", "settings.json"),
		filepath.Join(o.Dir, ".claude", "settings.local.json"),
	} {
		var s struct {
			EnabledPlugins map[string]any `json:"enabledPlugins"`
		}
		if !readLenient(path, &s) {
			continue
		}
		ids := make([]string, 0, len(s.EnabledPlugins))
		for id := range s.EnabledPlugins {
			if strings.HasPrefix(id, PluginName+"@") {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			on, _ := s.EnabledPlugins[id].(bool)
			sites = append(sites, pluginSite{id: id, path: path, enabled: on})
		}
	}
	return sites
}

// pluginInstalled lists the massgen plugin's ids in Claude Code's record
// of installed plugins (plugins/installed_plugins.json: {"version": 2,
// "plugins": {"massgen@marketplace": [{"scope": …}]}}; version 1 keyed the
// same ids to one object).
func pluginInstalled(o *Options) []string {
	var rec struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if !readLenient(filepath.Join(claudeDir(o), "plugins", "installed_plugins.json"), &rec) {
		return nil
	}
	var ids []string
	for id := range rec.Plugins {
		if strings.HasPrefix(id, PluginName+"@") {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// readLenient decodes a JSON (or JSONC) file into v; false when it is
// missing or does not parse.
func readLenient(path string, v any) bool {
	data, ok, err := readFile(path)
	if !ok || err != nil {
		return false
	}
	std, err := hujson.Standardize(data)
	return err == nil && json.Unmarshal(std, v) == nil
}

// pluginCheck is what install into Claude Code makes of the massgen plugin:
// enabled where this entry would apply, it refuses (the two servers would be
// identical), unless forced, which installs beside it and says so;
// installed but disabled, it notes that enabling it would make a second
// server.
func pluginCheck(o *Options, rep *Report, t target) error {
	var on []pluginSite
	id := ""
	for _, s := range pluginSites(o) {
		if s.enabled {
			on = append(on, s)
		}
		id = cmp.Or(id, s.id)
	}
	installed := pluginInstalled(o)
	if len(installed) > 0 {
		id = cmp.Or(id, installed[0])
	}
	if id == "" {
		return nil
	}
	if len(on) == 0 {
		if len(installed) > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the %s plugin is installed in Claude Code but not enabled; enabling it (claude plugin enable %s) would run a second, identical server beside this entry, so keep one.", id, id))
		}
		return nil
	}
	where := make([]string, len(on))
	for i, s := range on {
		where[i] = s.path
	}
	if o.Force {
		rep.Notes = append(rep.Notes, fmt.Sprintf("--force installed beside the enabled %s plugin (%s): Claude Code now runs two identical massgen servers, %s and plugin:%s:%s; keep one (uninstall claude-code, or claude plugin disable %s).",
			id, strings.Join(where, ", "), ServerName, PluginName, ServerName, id))
		return nil
	}
	return &pluginError{id: id, where: where, path: t.path}
}

type pluginError struct {
	id, path string
	where    []string
}

func (e *pluginError) Error() string {
	return fmt.Sprintf("the %s plugin is enabled in Claude Code (%s), and it already runs this server as plugin:%s:%s; an entry in %s would be a second, identical server, every tool offered twice.\n"+
		"Keep the plugin (it also brings the skills and the /massgen: commands): there is nothing to install.\n"+
		"Or keep an entry instead: claude plugin disable %s, then install again.\n"+
		"--force installs beside the plugin anyway.",
		e.id, strings.Join(e.where, ", "), PluginName, ServerName, e.path, e.id)
}

func (e *pluginError) Unwrap() error { return ErrPluginEnabled }

// BesidePlugin is the warning the plugin's server gives when Claude Code
// also has a massgen entry of its own — the user scope in ~/.claude.json
// (or $CLAUDE_CONFIG_DIR/.claude.json) or this project's .mcp.json, as
// install claude-code writes them — so that it runs two identical servers;
// "" when there is none. It names which to keep and how.
func BesidePlugin(o Options) string {
	if err := o.defaults(); err != nil {
		return ""
	}
	var found []string
	for _, scope := range []string{ScopeUser, ScopeProject} {
		o.Scope, o.Client = scope, "claude-code"
		t, err := resolve(&o)
		if err != nil {
			continue
		}
		data, ok, err := readFile(t.path)
		if !ok || err != nil {
			continue
		}
		if cur, err := getEntry(t, data); err == nil && cur != nil {
			flag := ""
			if scope == ScopeProject {
				flag = " --scope project"
			}
			found = append(found, fmt.Sprintf("the %s entry in %s (massgen-mcp uninstall claude-code%s removes it)", ServerName, t.path, flag))
		}
	}
	if len(found) == 0 {
		return ""
	}
	id := PluginName + "@massgen-mcp"
	for _, s := range pluginSites(&o) {
		if s.enabled {
			id = s.id
			break
		}
	}
	return fmt.Sprintf("Claude Code runs two identical massgen servers: this one, from the %s plugin (plugin:%s:%s), and %s. Keep one: the plugin, which also brings the skills and the /massgen: commands, by removing the entry; or the entry, with claude plugin disable %s.",
		id, PluginName, ServerName, strings.Join(found, ", and "), id)
}
