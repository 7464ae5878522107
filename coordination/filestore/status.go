package filestore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

var _ coordination.ProjectionStore = (*Store)(nil)

// Project renders status.json, MassGen's field names plus ours (docs/DESIGN.md,
// "status.json"), from the state the service derived, and returns its write.
func (s *Store) Project(p coordination.Projection) (func(context.Context) error, error) {
	id := p.Session.ID
	body, err := json.MarshalIndent(massgenStatus(p), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cannot encode status.json of session %q: %w", id, err)
	}
	return func(context.Context) error { return s.writeStatus(id, body) }, nil
}

// writeStatus replaces status.json atomically; it is derived, so not fsynced.
func (s *Store) writeStatus(id string, body []byte) error {
	dir, err := s.existing(id)
	if err != nil {
		return err
	}
	if err := writeDerived(dir, "status.json", body); err != nil {
		return fmt.Errorf("cannot write status.json of session %q: %w", id, diskFull(err, dir, len(body)))
	}
	return nil
}

// massgenStatus maps a state onto status.json as MassGen writes it, plus our
// own fields.
func massgenStatus(p coordination.Projection) map[string]any {
	s, st, res, now := p.Session, p.State, p.Result, p.At
	agents := map[string]any{}
	for _, a := range st.Agents {
		ag, _ := s.Agent(a.ID)
		u := coordination.Totals(a.Entries)
		var cost any
		if u.CostUSD != nil {
			cost = *u.CostUSD
		}
		row := map[string]any{
			"status":              a.Status(ag.IsHost()),
			"answer_count":        a.Answers,
			"latest_answer_label": nil,
			"vote_cast":           nil,
			"token_usage": map[string]any{
				"input_tokens": u.Input, "output_tokens": u.Output, "reasoning_tokens": u.Reasoning,
				"cached_input_tokens": u.CachedInput, "estimated_cost": cost,
			},
		}
		row["answer"], row["error"] = nil, nil
		if a.LatestAnswer != nil {
			row["latest_answer_label"] = a.LatestAnswer.Label
			row["answer"] = a.LatestAnswer.Content
		}
		if e := latestError(a); e != nil {
			row["error"] = massgenError(e)
		}
		if v := a.StandingVote; v != nil {
			row["vote_cast"] = map[string]any{"voted_for_agent": v.Target, "voted_for_label": v.TargetLabel, "reason_preview": coordination.Preview(v.Reason, 100)}
		}
		agents[a.ID] = row
	}
	var winner, previewText any
	if res.Winner != nil {
		winner = res.Winner.AgentID
	}
	if res.FinalAnswer != nil {
		previewText = coordination.Preview(*res.FinalAnswer, 200)
	}
	var totalCost any
	if res.CostUSD != nil {
		totalCost = *res.CostUSD
	}
	return map[string]any{
		"finish_reason": finishReason(res),
		"finish_reason_details": map[string]any{
			"stop_reason": res.StopReason, "how_chosen": res.HowChosen,
		},
		"is_complete": res.Status == coordination.StatusFinished || res.Status == coordination.StatusFailed,
		"meta": map[string]any{
			"session_id": s.ID, "question": s.Task, "start_time": float64(s.CreatedAt.UnixNano()) / 1e9,
			"elapsed_seconds": now.Sub(s.CreatedAt).Seconds(), "last_updated": float64(now.UnixNano()) / 1e9,
		},
		"costs": map[string]any{
			"total_estimated_cost": totalCost, "total_input_tokens": res.Usage.Input, "total_output_tokens": res.Usage.Output,
		},
		"agents":      agents,
		"results":     map[string]any{"votes": res.Consensus.Tally, "winner": winner, "final_answer_preview": previewText},
		"next_agents": res.NextAgents,
		"consensus":   res.Consensus,
		"stop_reason": res.StopReason,
		"how_chosen":  res.HowChosen,
		"status":      res.Status,
	}
}

// finishReason is status.json's finish_reason: completed whenever the
// session has a winner (whatever ended it: forced_first after every agent
// failed is still an answer), error only for a failed session (no answer at
// all), timeout for one that timed out without an answer.
func finishReason(res *coordination.TeamResult) string {
	switch res.Status {
	case coordination.StatusFinished:
		if res.Winner != nil {
			return "completed"
		}
		fallthrough
	case coordination.StatusFailed:
		if coordination.Deref(res.StopReason) == coordination.StopTimeout {
			return "timeout"
		}
		return "error"
	case coordination.StatusCancelled:
		return "cancelled"
	case coordination.StatusInterrupted:
		return "interrupted" // ours: MassGen's own runs have no such state
	}
	return "in_progress"
}

// latestError is the agent's error entry if its latest entries are errors
// (it is failing or dropped), nil once an answer or vote followed.
func latestError(a *coordination.AgentState) *coordination.Entry {
	if a.ConsecutiveFails == 0 || len(a.Entries) == 0 {
		return nil
	}
	return &a.Entries[len(a.Entries)-1]
}

// massgenError is an error as MassGen's status tracker writes it.
func massgenError(e *coordination.Entry) map[string]any {
	typ := "error"
	if e.Class == providers.ClassTimeout {
		typ = "timeout"
	}
	return map[string]any{"type": typ, "message": e.Message, "timestamp": float64(e.Time.UnixNano()) / 1e9}
}
