package coordination

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// The read-only queries below serve listings and resources (the MCP
// resources massgen://sessions, …/events, …/answers/{label}). None of them
// decides or writes anything: a reader never changes a session.

// SessionSummary is one session in a listing.
type SessionSummary struct {
	SessionID  string      `json:"session_id"`
	Task       string      `json:"task"` // the first 200 characters
	Status     string      `json:"status"`
	Driver     string      `json:"driver"` // run | step
	Agents     []string    `json:"agents"`
	Steps      int         `json:"steps"`
	NextAgents []string    `json:"next_agents"`
	Winner     *Winner     `json:"winner"`
	StopReason *StopReason `json:"stop_reason"`
	CreatedAt  time.Time   `json:"created_at"`
	Foreign    bool        `json:"written_by_massgen"`
	// Duration is the result's duration_seconds: the finished result's,
	// up to last_alive for an interrupted session, up to its cancel for a
	// cancelled one, or the time since the session was created while it
	// runs (or is decided).
	Duration float64  `json:"duration_seconds"`
	CostUSD  *float64 `json:"cost_usd"` // nil when some model's price is unknown
	// Conversation, Turn and Previous group a follow-up turn with the turns
	// before it (turns.go); empty for a first turn.
	Conversation string `json:"conversation,omitempty"`
	Turn         int    `json:"turn,omitempty"`
	Previous     string `json:"previous,omitempty"`
}

// Sessions lists every stored session with its status as the ledger stands,
// oldest first. A session that cannot be read (a half-written directory, a
// foreign layout this build does not understand) is skipped rather than
// failing the whole listing.
func (svc *Service) Sessions(ctx context.Context) ([]SessionSummary, error) {
	ids, err := svc.store.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SessionSummary, 0, len(ids))
	for _, id := range ids {
		s, l, st, err := svc.sessions.load(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			svc.log.Debug().Err(err).Str("session", id).Msg("skipping an unreadable session in the listing")
			continue
		}
		out = append(out, svc.summary(s, st, svc.snapshot(s, l, st)))
	}
	return out, nil
}

// summary is a session's row in a listing.
func (svc *Service) summary(s *Session, st *State, res *TeamResult) SessionSummary {
	driver := s.Driver
	if driver == "" {
		driver = DriverRun
	}
	sum := SessionSummary{
		SessionID:  s.ID,
		Task:       Preview(s.Task, 200),
		Status:     res.Status,
		Driver:     driver,
		Agents:     s.AgentIDs(),
		Steps:      st.Steps,
		NextAgents: append([]string{}, st.Next...),
		Winner:     res.Winner,
		StopReason: res.StopReason,
		CreatedAt:  s.CreatedAt,
		Foreign:    s.Foreign,
		Duration:   res.Duration,
		CostUSD:    res.CostUSD,
		Turn:       s.Turn,
		Previous:   s.Previous,
	}
	if s.Turn > 0 {
		sum.Conversation = s.Conversation
	}
	return sum
}

// Events returns a session's whole timeline (events.jsonl), oldest first; an
// empty list for a store that keeps none. Over HTTP its messages name no
// server's paths (HidePaths).
func (svc *Service) Events(ctx context.Context, id string) ([]Event, error) {
	if _, err := svc.store.Session(ctx, id); err != nil {
		return nil, err
	}
	out := []Event{}
	if es, ok := svc.store.(EventSource); ok {
		evs, err := es.Events(ctx, id)
		if err != nil {
			return nil, err
		}
		// As the status view's (statusView): an event recorded before
		// its paths were hidden.
		hide := svc.pathHider()
		for _, ev := range evs {
			ev.Message = hide(ev.Message)
			out = append(out, ev)
		}
	}
	return out, nil
}

// LabelledAnswer is one answer found by its label.
type LabelledAnswer struct {
	SessionID string    `json:"session_id"`
	AgentID   string    `json:"agent_id"`
	Label     string    `json:"label"`
	Model     string    `json:"model"`
	Step      int       `json:"step"`
	Latest    bool      `json:"latest"` // still the agent's latest answer
	Content   string    `json:"content"`
	Time      time.Time `json:"timestamp"`
}

// Answer finds any answer of a session by its label (agentN.k), not only a
// latest one, so a reader can follow a vote's target_label to the text the
// voter saw.
func (svc *Service) Answer(ctx context.Context, id, label string) (*LabelledAnswer, error) {
	s, _, st, err := svc.sessions.load(ctx, id)
	if err != nil {
		return nil, err
	}
	var labels []string
	for _, a := range byAnonOrder(st.Agents) {
		for _, e := range a.Entries {
			if e.Kind != KindAnswer {
				continue
			}
			if e.Label == label {
				ag, _ := s.Agent(a.ID)
				latest := a.LatestAnswer != nil && a.LatestAnswer.Step == e.Step
				return &LabelledAnswer{SessionID: s.ID, AgentID: a.ID, Label: e.Label, Model: providers.ShowSpec(ag.Model), Step: e.Step, Latest: latest, Content: e.Content, Time: e.Time}, nil
			}
			labels = append(labels, e.Label)
		}
	}
	known := "it has no answers yet"
	if len(labels) > 0 {
		known = "its labels are " + strings.Join(labels, ", ")
	}
	return nil, fmt.Errorf("%w: session %s has no answer labelled %q; %s", ErrBadInput, id, label, known)
}

// Ledger reads a session's ledger for display, with what a MassGen-written
// ledger lacks (answer numbers, labels) filled in. It may be shared with the
// store: read it, never change it.
func (svc *Service) Ledger(ctx context.Context, id string) (*Ledger, error) {
	_, l, _, err := svc.sessions.load(ctx, id)
	return l, err
}
