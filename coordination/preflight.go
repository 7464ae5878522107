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
	var missingErr, refusedErr error
	var refused []DroppedAgent
	for i, err := range svc.opts.CheckModels(ctx, specs) {
		a := who[i]
		switch {
		case err == nil:
		case errors.Is(err, providers.ErrModelNotFound):
			missing = append(missing, fmt.Sprintf("agent %s (%s): %v", a.ID, a.Model, err))
			missingErr = cmp.Or(missingErr, err)
		default:
			refused = append(refused, DroppedAgent{AgentID: a.ID, Model: a.Model, Class: string(providers.ClassOf(err)), Message: err.Error()})
			refusedErr = cmp.Or(refusedErr, fmt.Errorf("%w: agent %s (%s): %w", ErrKeyRefused, a.ID, a.Model, err))
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
		return refusedErr
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

// listedError says what is wrong with every agent at once while matching
// ErrBadSpec and providers.ErrModelNotFound.
type listedError struct {
	msg  string
	errs []error
}

func (e *listedError) Error() string   { return e.msg }
func (e *listedError) Unwrap() []error { return e.errs }
