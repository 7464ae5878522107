package backends

import (
	"errors"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ErrNoDefaultTeam is wrapped by DefaultTeam's error when fewer than two of
// the default backends can be used here.
var ErrNoDefaultTeam = errors.New("no default team")

// defaultTeamOrder is the preference of docs/DESIGN.md, "Backends and the simulated agents": the first three of these
// with keys make the team.
var defaultTeamOrder = []string{"openai", "gemini", "claude", "grok"}

// DefaultTeam returns the default team with the zero Config.
func DefaultTeam() ([]string, error) { return Config{}.DefaultTeam() }

// DefaultTeamWhy returns the default team and why, with the zero Config.
func DefaultTeamWhy() ([]string, string, error) { return Config{}.DefaultTeamWhy() }

// secondModel is the other model of a provider's two-model default team,
// used when only that provider has a key: a different model answers
// differently (two copies of one model mostly agree with themselves), and
// the provider's smaller current model is the one that is surely listed for
// a key that can call the default.
var secondModel = map[string]string{
	"openai": "gpt-5.4-mini",
	"gemini": "gemini-3-flash-preview",
	"claude": "claude-sonnet-4-6",
	"grok":   "grok-4-1-fast-reasoning",
}

// DefaultTeam returns the model specs of the team used when none is named
// (DefaultTeamWhy without the why).
func (c Config) DefaultTeam() ([]string, error) {
	team, _, err := c.DefaultTeamWhy()
	return team, err
}

// DefaultTeamWhy returns the model specs of the team used when none is
// named, and a sentence saying why these: the default models of the first
// three of openai, gemini, claude and grok whose keys are set; with only one
// of them, two different models of that provider. None is an error naming
// the variables to set, and sim for a dry run.
func (c Config) DefaultTeamWhy() ([]string, string, error) {
	env := c.env()
	var team, have, lacking, vars []string
	for _, name := range defaultTeamOrder {
		info, _ := providers.LookupBackend(name)
		vars = append(vars, strings.Join(info.KeyEnv, " or "))
		if _, err := env.Resolve(info, ""); err != nil {
			lacking = append(lacking, fmt.Sprintf("%s: %s", name, resolveWhy(err)))
			continue
		}
		if !c.implemented(info) {
			lacking = append(lacking, name+": not available in this build")
			continue
		}
		have = append(have, name)
		if len(team) < 3 {
			spec, err := providers.ParseSpec(name)
			if err != nil {
				return nil, "", err
			}
			team = append(team, spec.String())
		}
	}
	if len(team) >= 2 {
		return team, fmt.Sprintf("the default models of %s: the first three of openai, gemini, claude and grok whose keys are set here", strings.Join(have[:len(team)], ", ")), nil
	}
	if len(team) == 1 {
		name := have[0]
		second := name + "/" + secondModel[name]
		info, _ := providers.LookupBackend(name)
		return append(team, second), fmt.Sprintf("only %s has a key here (%s), so the team is two different models of it: %s, its default, and %s, a smaller model that answers differently; set the key of another of openai, gemini, claude and grok (%s) for a team of providers",
			name, strings.Join(info.KeyEnv, " or "), team[0], second, strings.Join(otherVars(name), ", ")), nil
	}
	return nil, "", fmt.Errorf("%w: it needs a key for one or more of openai, gemini, claude and grok, and none of them can be used here (%s). Set at least one: %s, in the environment or as KEY=value lines in ./.env or ~/.env (an MCP client can pass it in the env entry of the server's config); or name the models yourself. For a dry run without keys, use sim agents, e.g. sim/strong,sim/strong,sim",
		ErrNoDefaultTeam, strings.Join(lacking, "; "), strings.Join(vars, ", "))
}

// otherVars lists the key variables of the default backends but one.
func otherVars(except string) []string {
	var out []string
	for _, name := range defaultTeamOrder {
		if name != except {
			info, _ := providers.LookupBackend(name)
			out = append(out, strings.Join(info.KeyEnv, " or "))
		}
	}
	return out
}
