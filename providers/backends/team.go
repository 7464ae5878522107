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

// defaultTeamOrder is DESIGN.md §4's preference: the first three of these
// with keys make the team.
var defaultTeamOrder = []string{"openai", "gemini", "claude", "grok"}

// DefaultTeam returns the default team with the zero Config.
func DefaultTeam() ([]string, error) { return Config{}.DefaultTeam() }

// DefaultTeam returns the model specs of the team used when none is named:
// the default models of the first three of openai, gemini, claude and grok
// whose keys are set. Fewer than two is an error naming the variables to
// set, and sim for a dry run.
func (c Config) DefaultTeam() ([]string, error) {
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
				return nil, err
			}
			team = append(team, spec.String())
		}
	}
	if len(team) >= 2 {
		return team, nil
	}
	usable := "none of them can be used"
	if len(have) == 1 {
		usable = "only " + have[0] + " can be used"
	}
	return nil, fmt.Errorf("%w: it needs two or three of openai, gemini, claude and grok, and %s here (%s). Set the keys of at least two: %s, in the environment or as KEY=value lines in ./.env or ~/.env; or name the models yourself. For a dry run without keys, use sim agents, e.g. sim/strong,sim/strong,sim",
		ErrNoDefaultTeam, usable, strings.Join(lacking, "; "), strings.Join(vars, ", "))
}
