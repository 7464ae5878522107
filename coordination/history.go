package coordination

import (
	"context"
	"fmt"
	"slices"

	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// HistorySessions is how many of the store's latest sessions consensus
// weighted reads for its weights: enough for the estimate to settle, few
// enough that creating a session stays a few store reads per past session.
const HistorySessions = 500

// weightsFromHistory estimates the team's weights under consensus weighted
// when the rules give none: from the store's latest short-answer sessions
// in which at least two of the team's models answered, each model's first
// answer (the first answer of the first agent running it), agreement only
// (EstimateReliability). This is the "past sessions" reading of the user's
// own history; the weights and their reasons are written into the new
// session's rules, so the session replays alike whatever the store holds
// later.
func (svc *Service) weightsFromHistory(ctx context.Context, agents []Agent) ([]VoteWeight, error) {
	ids, err := svc.store.Sessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading past sessions for the weights: %w", err)
	}
	var models []string
	for _, a := range agents {
		if !slices.Contains(models, a.Model) {
			models = append(models, a.Model)
		}
	}
	var history []PastItem
	for _, id := range ids[max(0, len(ids)-HistorySessions):] {
		s, err := svc.store.Session(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("reading past session %s for the weights: %w", id, err)
		}
		if !s.Rules.short() {
			continue
		}
		l, err := svc.store.Ledger(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("reading past session %s for the weights: %w", id, err)
		}
		it := PastItem{}
		for _, a := range s.Agents {
			if _, seen := it[a.Model]; seen || !slices.Contains(models, a.Model) {
				continue
			}
			for _, e := range l.Agents[a.ID] {
				if e.Kind == KindAnswer {
					it[a.Model] = finalvalue.Of(e.Content)
					break
				}
			}
		}
		if len(it) >= 2 {
			history = append(history, it)
		}
	}
	rel := EstimateReliability(history, models)
	var out []VoteWeight
	for _, a := range agents {
		for _, r := range rel {
			if r.Key == a.Model {
				out = append(out, VoteWeight{Agent: a.ID, Weight: r.Weight, Reason: r.reason("past short-answer sessions")})
			}
		}
	}
	return out, nil
}
