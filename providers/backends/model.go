package backends

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ErrNoModel is wrapped by FirstModel's error when no real backend can be
// used here.
var ErrNoModel = errors.New("no usable model")

// FirstModel returns the model spec for a single call that no caller named
// a model for (generating evaluation criteria): with the zero Config.
func FirstModel(ctx context.Context) (string, error) { return Config{}.FirstModel(ctx) }

// FirstModel returns the default model of the first usable real backend in
// Usable's report, preferring openai, gemini, claude and grok (the default
// team's order) and then the rest of the table. sim and host are never
// chosen: simulated criteria must be asked for by name. A backend that needs
// a model named (a local server, openrouter) is skipped, since there is no
// model to guess. None usable is an error, wrapping ErrNoModel, naming the
// variables to set and any usable backend that could be named instead.
func (c Config) FirstModel(ctx context.Context) (string, error) {
	statuses := c.Usable(ctx)
	rank := func(name string) int {
		if i := slices.Index(defaultTeamOrder, name); i >= 0 {
			return i
		}
		return len(defaultTeamOrder)
	}
	// Stable, so the rest keep the table's order.
	slices.SortStableFunc(statuses, func(a, b BackendStatus) int { return rank(a.Name) - rank(b.Name) })
	var needName, why []string
	for _, st := range statuses {
		info, _ := providers.LookupBackend(st.Name)
		if slices.Contains(defaultTeamOrder, st.Name) {
			why = append(why, st.Name+": "+st.Why)
		}
		if !st.Usable || info.Transport == providers.TransportSim || info.Transport == providers.TransportHost || info.Transport == providers.TransportElicitation {
			continue
		}
		if info.DefaultModel == "" {
			needName = append(needName, fmt.Sprintf("%s/<model> (%s)", st.Name, st.Why))
			continue
		}
		spec, err := providers.ParseSpec(st.Name)
		if err != nil {
			return "", err
		}
		return spec.String(), nil
	}
	var vars []string
	for _, name := range defaultTeamOrder {
		info, _ := providers.LookupBackend(name)
		vars = append(vars, strings.Join(info.KeyEnv, " or "))
	}
	other := "name a model (sim writes simulated ones, offline)"
	if len(needName) > 0 {
		other = "name a model that is usable here: " + strings.Join(needName, "; ") + " (or sim, for simulated ones offline)"
	}
	return "", fmt.Errorf("%w: none of openai, gemini, claude and grok can be used here (%s). Set the key of one of them, %s, in the environment, ./.env or ~/.env; or %s",
		ErrNoModel, strings.Join(why, "; "), strings.Join(vars, ", "), other)
}
