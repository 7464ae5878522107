package coordination

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// StatusView is what team_status and `massgen-mcp status` show: the team
// result as it stands plus each agent's state, the rules and the timeline.
type StatusView struct {
	Result    *TeamResult     `json:"result"`
	Task      string          `json:"task"`
	Rules     Rules           `json:"rules"`
	Seed      int64           `json:"seed"`
	Criteria  []criteria.Item `json:"eval_criteria"`
	Agents    []AgentStatus   `json:"agents"`
	Revote    []string        `json:"revote_pending"`
	CreatedAt time.Time       `json:"created_at"`
	Foreign   bool            `json:"written_by_massgen"`
	Timeline  []Event         `json:"timeline"`
}

// AgentStatus is one agent's row in a status view.
type AgentStatus struct {
	ID           string     `json:"id"`
	Alias        string     `json:"alias"`
	Model        string     `json:"model"`
	Host         bool       `json:"host"`
	Status       string     `json:"status"`
	Steps        int        `json:"steps"`
	Answers      int        `json:"answers"`
	LatestLabel  string     `json:"latest_answer_label,omitempty"`
	Preview      string     `json:"answer_preview,omitempty"`
	Vote         *VoteView  `json:"vote"`
	StandingVote bool       `json:"standing_vote"`
	Next         bool       `json:"next"`
	Why          string     `json:"why_not_next,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	Usage        AgentUsage `json:"usage"`
}

// Status derives a session's status (and decides it if it is settled or past
// a limit, exactly as a step would).
func (svc *Service) Status(ctx context.Context, id string) (*StatusView, error) {
	s, err := svc.session(ctx, id)
	if err != nil {
		return nil, err
	}
	l, st, res, err := svc.current(ctx, s)
	if err != nil {
		return nil, err
	}
	return svc.statusView(ctx, s, l, st, res), nil
}

// Result is the team result as it stands.
func (svc *Service) Result(ctx context.Context, id string) (*TeamResult, error) {
	s, err := svc.session(ctx, id)
	if err != nil {
		return nil, err
	}
	_, _, res, err := svc.current(ctx, s)
	return res, err
}

// Inspect derives a session's status without deciding or writing anything:
// for read-only views of a session, such as one written by MassGen.
func (svc *Service) Inspect(ctx context.Context, id string) (*StatusView, error) {
	s, l, st, err := svc.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return svc.statusView(ctx, s, l, st, svc.snapshot(s, l, st)), nil
}

// EventSource is implemented by stores that keep a readable timeline.
type EventSource interface {
	Events(ctx context.Context, id string) ([]Event, error)
}

func (svc *Service) statusView(ctx context.Context, s *Session, l *Ledger, st *State, res *TeamResult) *StatusView {
	v := &StatusView{
		Result: res, Task: s.Task, Rules: s.Rules, Seed: s.Seed, Criteria: s.Criteria,
		Agents: []AgentStatus{}, Revote: append([]string{}, st.Pending...), CreatedAt: s.CreatedAt,
		Foreign: s.Foreign, Timeline: []Event{},
	}
	if v.Criteria == nil {
		v.Criteria = []criteria.Item{}
	}
	usage := map[string]AgentUsage{}
	for _, u := range res.Agents {
		usage[u.AgentID] = u
	}
	for _, a := range st.Agents {
		ag, _ := s.Agent(a.ID)
		row := AgentStatus{
			ID: a.ID, Alias: Alias(a.Alias), Model: ag.Model, Host: isHost(ag), Status: agentStatus(a, isHost(ag)),
			Steps: a.Steps, Answers: a.Answers, StandingVote: a.StandingVote != nil, Next: a.Next, Why: a.Why,
			Usage: usage[a.ID],
		}
		if row.Usage.AgentID == "" {
			row.Usage = AgentUsage{AgentID: a.ID, Model: ag.Model}
		}
		if a.LatestAnswer != nil {
			row.LatestLabel, row.Preview = a.LatestAnswer.Label, Preview(a.LatestAnswer.Content, 200)
		}
		if vt := a.LatestVote; vt != nil {
			row.Vote = &VoteView{Voter: a.ID, Target: vt.Target, TargetLabel: vt.TargetLabel, Reason: vt.Reason, Stale: IsVoteStale(vt, st.Latest)}
		}
		if n := len(a.Entries); n > 0 && a.Entries[n-1].Kind == KindError {
			e := a.Entries[n-1]
			row.LastError = string(e.Class) + ": " + e.Message
		}
		v.Agents = append(v.Agents, row)
	}
	if es, ok := svc.store.(EventSource); ok {
		if evs, err := es.Events(ctx, s.ID); err == nil {
			if len(evs) > 100 {
				evs = evs[len(evs)-100:]
			}
			v.Timeline = append(v.Timeline, evs...)
		}
	}
	return v
}

// agentStatus names an agent's state with status.json's words.
func agentStatus(a *AgentState, host bool) string {
	switch {
	case a.Dropped:
		return "dropped"
	case a.InFlight:
		return "streaming"
	case a.StandingVote != nil:
		return "voted"
	case a.Capped:
		return "capped"
	case a.ConsecutiveFails > 0:
		return "error"
	case host && a.Next:
		return "waiting_for_host"
	case a.LatestAnswer != nil:
		return "answered"
	}
	return "waiting"
}

// Preview is s cut to n runes, with an ellipsis when cut.
func Preview(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// writeStatus rewrites status.json with MassGen's field names (DESIGN.md §3).
// The caller holds the session lock, so versions are queued in the order the
// state was derived, and one writer at a time writes the latest.
func (svc *Service) writeStatus(ctx context.Context, s *Session, st *State, res *TeamResult) {
	svc.queueStatus(ctx, s, st, res, false)
}

// writeStatusSoon is writeStatus for steps: a running session's status is
// written in the background.
func (svc *Service) writeStatusSoon(ctx context.Context, s *Session, st *State, res *TeamResult) {
	svc.queueStatus(ctx, s, st, res, true)
}

// keepsFiles tells whether the store keeps a status.json and final files
// worth writing.
func (svc *Service) keepsFiles() bool { return svc.files != nil }

func (svc *Service) queueStatus(ctx context.Context, s *Session, st *State, res *TeamResult, soon bool) {
	if !svc.keepsFiles() {
		return
	}
	if res == nil {
		l := &Ledger{Agents: map[string][]Entry{}}
		res = svc.snapshot(s, l, st)
	}
	body, err := json.MarshalIndent(massgenStatus(s, st, res, svc.now()), "", "  ")
	if err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not encode status.json")
		return
	}
	slot := svc.statusSlot(s.ID)
	slot.mu.Lock()
	slot.queued++
	slot.body = body
	background := soon && res.Status == StatusRunning
	start := background && !slot.writing
	if start {
		slot.writing = true
	}
	slot.mu.Unlock()
	switch {
	case start:
		go svc.flushStatus(context.WithoutCancel(ctx), s.ID, slot)
	case !background:
		svc.flushStatus(ctx, s.ID, slot)
	}
}

// statusQueue holds the latest status.json of a session not yet written.
type statusQueue struct {
	write   sync.Mutex // one writer at a time, so an older version never lands last
	mu      sync.Mutex
	queued  uint64 // versions queued
	written uint64 // versions written
	body    []byte // the latest version
	writing bool   // a background writer is on it
}

func (svc *Service) statusSlot(id string) *statusQueue {
	q, _ := svc.statuses.LoadOrStore(id, &statusQueue{})
	return q.(*statusQueue)
}

// flushStatus writes the latest queued status until none is pending.
func (svc *Service) flushStatus(ctx context.Context, id string, q *statusQueue) {
	q.write.Lock()
	defer q.write.Unlock()
	for {
		q.mu.Lock()
		if q.written >= q.queued {
			q.writing = false
			q.mu.Unlock()
			return
		}
		v, body := q.queued, q.body
		q.mu.Unlock()
		if err := svc.files.WriteStatus(ctx, id, body); err != nil {
			svc.log.Warn().Err(err).Str("session", id).Msg("could not write status.json")
		}
		q.mu.Lock()
		q.written = v
		if q.written == q.queued {
			q.body = nil
		}
		q.mu.Unlock()
	}
}

// massgenStatus maps a state onto status.json as MassGen writes it, plus our
// own fields.
func massgenStatus(s *Session, st *State, res *TeamResult, now time.Time) map[string]any {
	finish := finishReason(res)
	agents := map[string]any{}
	for _, a := range st.Agents {
		ag, _ := s.Agent(a.ID)
		u := totals(a.Entries)
		var cost any
		if u.CostUSD != nil {
			cost = *u.CostUSD
		}
		row := map[string]any{
			"status":              agentStatus(a, isHost(ag)),
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
			row["vote_cast"] = map[string]any{"voted_for_agent": v.Target, "voted_for_label": v.TargetLabel, "reason_preview": Preview(v.Reason, 100)}
		}
		agents[a.ID] = row
	}
	var winner, previewText any
	if res.Winner != nil {
		winner = res.Winner.AgentID
	}
	if res.FinalAnswer != nil {
		previewText = Preview(*res.FinalAnswer, 200)
	}
	var totalCost any
	if res.CostUSD != nil {
		totalCost = *res.CostUSD
	}
	return map[string]any{
		"finish_reason": finish,
		"finish_reason_details": map[string]any{
			"stop_reason": res.StopReason, "how_chosen": res.HowChosen,
		},
		"is_complete": res.Status == StatusFinished || res.Status == StatusFailed,
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
func finishReason(res *TeamResult) string {
	switch res.Status {
	case StatusFinished:
		if res.Winner != nil {
			return "completed"
		}
		fallthrough
	case StatusFailed:
		if Deref(res.StopReason) == StopTimeout {
			return "timeout"
		}
		return "error"
	case StatusCancelled:
		return "cancelled"
	}
	return "in_progress"
}

// latestError is the agent's error entry if its latest entries are errors
// (it is failing or dropped), nil once an answer or vote followed.
func latestError(a *AgentState) *Entry {
	if a.ConsecutiveFails == 0 || len(a.Entries) == 0 {
		return nil
	}
	return &a.Entries[len(a.Entries)-1]
}

// massgenError is an error as MassGen's status tracker writes it.
func massgenError(e *Entry) map[string]any {
	typ := "error"
	if e.Class == providers.ClassTimeout {
		typ = "timeout"
	}
	return map[string]any{"type": typ, "message": e.Message, "timestamp": float64(e.Time.UnixNano()) / 1e9}
}
