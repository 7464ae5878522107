package coordination

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ErrKeyRefused is wrapped by the error for a team whose provider refused
// its key in the pre-flight.
var ErrKeyRefused = errors.New("the provider refused the API key")

// preflight asks each agent's provider whether its model exists (Options.
// CheckModels) before the session is written, so a typo costs nothing: a
// model its provider does not list refuses the team, naming the closest
// listed names. An agent whose key the provider refuses is left out, like
// a keyless one, while two or more agents remain and the rules are not
// strict; otherwise the team is refused.
func (svc *Service) preflight(ctx context.Context, s *Session) error {
	if svc.opts.CheckModels == nil {
		return nil
	}
	var specs []providers.Spec
	var who []Agent
	for _, a := range s.Agents {
		if a.IsHost() {
			continue
		}
		if sp, err := a.Spec(); err == nil {
			specs, who = append(specs, sp), append(who, a)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	var missing []string
	var missingErr error
	var refused []DroppedAgent
	var refusedWhy []error
	for i, err := range svc.opts.CheckModels(ctx, specs) {
		a := who[i]
		shown := providers.ShowSpec(a.Model)
		switch {
		case err == nil:
		case errors.Is(err, providers.ErrModelNotFound):
			missing = append(missing, fmt.Sprintf("agent %s (%s): %v", a.ID, shown, err))
			missingErr = cmp.Or(missingErr, err)
		default:
			refused = append(refused, DroppedAgent{AgentID: a.ID, Model: shown, Class: string(providers.ClassOf(err)), Message: err.Error(),
				RetryAfterMS: providers.RetryAfterOf(err).Milliseconds()})
			refusedWhy = append(refusedWhy, fmt.Errorf("agent %s (%s): %w", a.ID, shown, err))
		}
	}
	if len(missing) > 0 {
		return &listedError{msg: fmt.Sprintf("%v: %s (checked against each provider's models list before any step)", ErrBadSpec, strings.Join(missing, "; ")),
			errs: []error{ErrBadSpec, missingErr}}
	}
	if len(refused) == 0 {
		return nil
	}
	if s.Rules.Strict || len(s.Agents)-len(refused) < 2 {
		return listed(ErrKeyRefused, "agents' keys were refused, so the team was not started", refusedWhy)
	}
	s.Agents = slices.DeleteFunc(s.Agents, func(a Agent) bool {
		return slices.ContainsFunc(refused, func(d DroppedAgent) bool { return d.AgentID == a.ID })
	})
	s.Dropped = append(s.Dropped, refused...)
	s.Aliases = assignAliases(s.AgentIDs(), s.Seed, s.Rules.Aliases)
	for _, d := range refused {
		svc.log.Warn().Str("agent", d.AgentID).Str("model", d.Model).Msg("left out of the team: its provider refused the key")
	}
	return nil
}

// listed refuses a team for what is wrong with each of its agents, all at
// once (told one at a time, a user sets a key, runs again and only then
// hears of the next): one agent's error reads "kind: agent a (m): why" as
// before; several read "kind: N agents have …:" then a line per agent. It
// matches kind and every agent's error (providers.ErrMissingKey, a
// *keys.MissingKeyError).
func listed(kind error, many string, whys []error) error {
	if len(whys) == 1 {
		return fmt.Errorf("%w: %w", kind, whys[0])
	}
	return listedQuietly(kind, fmt.Sprintf("%v: %d %s:", kind, len(whys), many), whys)
}

// listedQuietly is listed in the agents' words alone ("agent a (m): why",
// or "N agents have …:" then a line per agent), still matching kind: a
// key or a program missing here is no fault of the spec, and "invalid
// model spec: …" sent the reader to fix what was fine.
func listedQuietly(kind error, head string, whys []error) error {
	if len(whys) == 1 {
		return &listedError{msg: whys[0].Error(), errs: []error{kind, whys[0]}}
	}
	lines := make([]string, len(whys))
	for i, w := range whys {
		lines[i] = "\n- " + w.Error()
	}
	return &listedError{msg: head + strings.Join(lines, ""), errs: append([]error{kind}, whys...)}
}

// listedError says what is wrong with every agent at once while matching
// each of errs (ErrBadSpec and providers.ErrModelNotFound, say).
type listedError struct {
	msg  string
	errs []error
}

func (e *listedError) Error() string   { return e.msg }
func (e *listedError) Unwrap() []error { return e.errs }
