package mcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/teamfile"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
)

// errTeamNotFound is a team argument that names no team file, and
// errTeamUnusable one whose file the operator got wrong: nothing the
// client can correct but its choice of team.
var (
	errTeamNotFound = errors.New("no such team")
	errTeamUnusable = errors.New("the team's file cannot be used")
)

// teamNamePattern is what a team name may be: a file's base name, never a
// path.
var teamNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// teamView is one team file under --teams-dir as list_backends shows it.
type teamView struct {
	Name    string   `json:"name" jsonschema_description:"Pass it as team to run_team or start_team."`
	Format  string   `json:"format" jsonschema_description:"massgen-mcp or MassGen (the file is MassGen's own config YAML)."`
	Models  []string `json:"models" jsonschema_description:"The team's agents' model specs, in order."`
	Problem string   `json:"problem,omitempty" jsonschema_description:"Why the team cannot be used, if it cannot."`
}

// teamPath finds DIR/name.yaml (or .yml).
func (h *handler) teamPath(name string) (string, error) {
	if h.opts.TeamsDir == "" {
		return "", fmt.Errorf("%w: this server has no team files (the operator starts it with serve --teams-dir DIR to offer some)", errTeamNotFound)
	}
	if !teamNamePattern.MatchString(name) || strings.Contains(name, "..") {
		return "", fmt.Errorf("%w: %q is not a team name (a team is named by its file's base name, e.g. review for review.yaml)", errTeamNotFound, name)
	}
	for _, ext := range []string{".yaml", ".yml"} {
		p := filepath.Join(h.opts.TeamsDir, name+ext)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no team %q under the server's teams directory", errTeamNotFound, name)
}

// loadTeam reads a team file by name. The file is read at every use, so an
// operator's edit applies to the next team without a restart. A team file is
// the operator's, so the operator-only settings in it stand.
func (h *handler) loadTeam(name string) (*teamfile.Team, error) {
	path, err := h.teamPath(name)
	if err != nil {
		return nil, err
	}
	t, err := teamfile.Load(path, teamfile.Options{Strict: h.opts.StrictConfig})
	if err != nil {
		h.log.Warn().Err(err).Str("team", name).Msg("a team file cannot be used")
		return nil, fmt.Errorf("%w: team %q cannot be used; the operator must fix its file: %s", errTeamUnusable, name, h.relative(err))
	}
	if w := t.Warning(); w != "" {
		h.log.Warn().Str("team", name).Msg(w)
	}
	return t, nil
}

// teams lists the team files under --teams-dir, each with its problem if it
// has one.
func (h *handler) teams() []teamView {
	out := []teamView{}
	if h.opts.TeamsDir == "" {
		return out
	}
	entries, err := os.ReadDir(h.opts.TeamsDir)
	if err != nil {
		h.log.Warn().Err(err).Msg("cannot list the teams directory")
		return out
	}
	seen := map[string]bool{}
	for _, ent := range entries {
		ext := filepath.Ext(ent.Name())
		name := strings.TrimSuffix(ent.Name(), ext)
		if (ext != ".yaml" && ext != ".yml") || !teamNamePattern.MatchString(name) || seen[name] {
			continue
		}
		seen[name] = true
		v := teamView{Name: name, Models: []string{}}
		t, err := teamfile.Load(filepath.Join(h.opts.TeamsDir, ent.Name()), teamfile.Options{Strict: h.opts.StrictConfig})
		if t != nil {
			v.Format = t.Format
			for _, a := range t.Agents {
				// The file's base_url may carry the proxy's credentials;
				// every tenant lists the teams.
				v.Models = append(v.Models, providers.ShowSpec(a.Model))
			}
		}
		if err != nil {
			v.Problem = h.relative(err)
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b teamView) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// applyTeam fills a spec from a named team file: its agents and context, and
// its rules under the ones the caller set.
func (h *handler) applyTeam(spec *coordination.TeamSpec, t TeamSettings) error {
	if len(t.Models) > 0 || len(t.Agents) > 0 {
		return fmt.Errorf("%w: give team, or models/agents, not both (the team file names its own agents)", coordination.ErrBadInput)
	}
	team, err := h.loadTeam(t.Team)
	if err != nil {
		return err
	}
	// The agents carry the team file's base URLs and key names with them
	// (coordination.Agent.Operator, KeyEnv): nothing joins a server-wide
	// list, so no other team, tenant or backend inherits them.
	spec.Agents = append([]coordination.Agent(nil), team.Agents...)
	spec.Context = append(append([]string(nil), team.Context...), spec.Context...)
	spec.Contexts = append(append([]workspace.Context(nil), team.Dirs...), spec.Contexts...) // the operator's directories: no roots apply
	spec.Rules = spec.Rules.Over(team.Rules)
	spec.Apply = team.Apply // the operator's alone: no client argument sets it
	return nil
}

// relative keeps the server's paths out of what a client reads of a team
// file's problem: the teams directory's own, and any other absolute path
// (a context path resolved outside it, a file the team names), of which
// only the base name is shown. The whole message goes to the log.
func (h *handler) relative(err error) string {
	msg := strings.ReplaceAll(err.Error(), h.opts.TeamsDir+string(filepath.Separator), "")
	return absPath.ReplaceAllStringFunc(msg, func(p string) string {
		rest := strings.TrimLeft(p, " \t\"'(=:")
		path := strings.TrimRight(rest, ".,;:)")
		return p[:len(p)-len(rest)] + "…/" + filepath.Base(path) + rest[len(path):]
	})
}

// absPath is an absolute path in a message: a slash after a space, a
// quote, a parenthesis, an equals sign or a colon, or at the start.
var absPath = regexp.MustCompile(`(^|[\s"'(=:])/[^\s"']+`)
