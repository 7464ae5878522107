package coordination

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

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
	// Turn and Previous place a follow-up turn in its conversation
	// (turns.go): its number and the session it continues; 0 and "" for a
	// first turn.
	Turn     int    `json:"turn,omitempty"`
	Previous string `json:"previous,omitempty"`
	// TeamName is the name the team was asked for by (Session.TeamName):
	// "" when it was named by its models or agents.
	TeamName string `json:"team_name,omitempty"`
	// TimelineCount is how many events Timeline is the last of: a status
	// keeps the session's latest timelineKept events (what it carries stays
	// small however long the session ran, though the store still reads
	// them all), and counts them all here, so a reader tells new events by
	// this count, never by len(Timeline).
	TimelineCount int `json:"timeline_count"`
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
	// LastAlive is, for an agent whose step in flight died with its process
	// (status "interrupted": its step lease abandoned), when that step was
	// last known alive.
	LastAlive *time.Time `json:"last_alive,omitempty"`
}

// Status derives a session's status (and decides it if it is settled or past
// a limit, exactly as a step would).
func (svc *Service) Status(ctx context.Context, id string) (*StatusView, error) {
	s, err := svc.sessions.get(ctx, id)
	if err != nil {
		return nil, err
	}
	l, st, res, err := svc.current(ctx, s)
	if err != nil {
		return nil, err
	}
	if r := svc.interrupted(ctx, s, res); r != res {
		// Nobody else will write status.json for a run that died: say so.
		res = r
		svc.queueStatus(ctx, s, st, res, false)
	}
	return svc.statusView(ctx, s, l, st, res), nil
}

// Result is the team result as it stands.
func (svc *Service) Result(ctx context.Context, id string) (*TeamResult, error) {
	res, _, err := svc.resultRead(ctx, id)
	return res, err
}

// resultRead is Result and how many cancels the session had in the same
// read: a follower that takes up a run it read interrupted lifts those and
// no cancel recorded after its read (takeUpWhenStopped).
func (svc *Service) resultRead(ctx context.Context, id string) (*TeamResult, int, error) {
	s, err := svc.sessions.get(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	_, st, res, err := svc.current(ctx, s)
	if err != nil {
		return nil, 0, err
	}
	return svc.interrupted(ctx, s, res), st.Life.Cancels, nil
}

// Inspect derives a session's status without deciding or writing anything:
// for read-only views of a session, such as one written by MassGen.
func (svc *Service) Inspect(ctx context.Context, id string) (*StatusView, error) {
	s, l, st, err := svc.sessions.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return svc.statusView(ctx, s, l, st, svc.interrupted(ctx, s, svc.snapshot(s, l, st))), nil
}

// timelineKept is how many of its latest events a status view keeps
// (StatusView.TimelineCount counts them all; Service.Events reads them all).
const timelineKept = 100

// EventSource is implemented by stores that keep a readable timeline.
type EventSource interface {
	Events(ctx context.Context, id string) ([]Event, error)
}

// EventTail is implemented by stores that can read a timeline's latest n
// events, oldest first, and count them all without reading the rest. A
// status view keeps only the latest timelineKept, and clients poll it every
// second or so for the length of a run: read whole, a long session's
// timeline made every poll cost its whole history.
type EventTail interface {
	EventTail(ctx context.Context, id string, n int) (latest []Event, total int, err error)
}

// latestEvents reads the latest n of a session's events and their count,
// through EventTail where the store has it.
func latestEvents(ctx context.Context, store any, id string, n int) ([]Event, int, error) {
	if et, ok := store.(EventTail); ok {
		return et.EventTail(ctx, id, n)
	}
	es, ok := store.(EventSource)
	if !ok {
		return nil, 0, nil
	}
	evs, err := es.Events(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	total := len(evs)
	if total > n {
		evs = evs[total-n:]
	}
	return evs, total, nil
}

func (svc *Service) statusView(ctx context.Context, s *Session, l *Ledger, st *State, res *TeamResult) *StatusView {
	v := &StatusView{
		Result: res, Task: s.Task, Rules: s.Rules, Seed: s.Seed, Criteria: s.Criteria,
		Agents: []AgentStatus{}, Revote: append([]string{}, st.Pending...), CreatedAt: s.CreatedAt,
		Foreign: s.Foreign, Timeline: []Event{}, Turn: s.Turn, Previous: s.Previous, TeamName: s.TeamName,
	}
	if v.Criteria == nil {
		v.Criteria = []criteria.Item{}
	}
	usage := map[string]AgentUsage{}
	for _, u := range res.Agents {
		usage[u.AgentID] = u
	}
	dead := svc.deadSteps(ctx, s.ID, res)
	// Recorded errors name no server's paths (hideRecordedPaths); those
	// recorded before that did are hidden from a client here, as far as
	// this replica's own directories go.
	hide := svc.pathHider()
	for _, a := range st.Agents {
		ag, _ := s.Agent(a.ID)
		row := AgentStatus{
			ID: a.ID, Alias: Alias(a.Alias), Model: providers.ShowSpec(ag.Model), Host: ag.IsHost(), Status: a.Status(ag.IsHost()),
			Steps: a.Steps, Answers: a.Answers, StandingVote: a.StandingVote != nil, Next: a.Next, Why: a.Why,
			Usage: usage[a.ID],
		}
		if row.Usage.AgentID == "" {
			row.Usage = AgentUsage{AgentID: a.ID, Model: providers.ShowSpec(ag.Model)}
		}
		if a.LatestAnswer != nil {
			row.LatestLabel, row.Preview = a.LatestAnswer.Label, Preview(a.LatestAnswer.Content, 200)
		}
		if vt := a.LatestVote; vt != nil {
			row.Vote = &VoteView{Voter: a.ID, Target: vt.Target, TargetLabel: vt.TargetLabel, Reason: vt.Reason, Stale: IsVoteStale(vt, st.Latest)}
		}
		if n := len(a.Entries); n > 0 && a.Entries[n-1].Kind == KindError {
			e := a.Entries[n-1]
			row.LastError = string(e.Class) + ": " + hide(e.Message)
		}
		if at, ok := dead[a.ID]; ok {
			row.Status, row.LastAlive = StatusInterrupted, &at
		}
		v.Agents = append(v.Agents, row)
	}
	if evs, total, err := latestEvents(ctx, svc.store, s.ID, timelineKept); err == nil {
		v.TimelineCount = total
		for _, ev := range evs {
			ev.Message = hide(ev.Message)
			v.Timeline = append(v.Timeline, ev)
		}
	}
	return v
}

// Status names the agent's state with the words of MassGen's status.json,
// which team_status uses too; host tells a host agent (Agent.IsHost).
func (a *AgentState) Status(host bool) string {
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

// writeStatus brings the store's projections (the file store's status.json,
// with MassGen's field names: docs/DESIGN.md, "status.json") in line with a derived state.
// The caller holds the session lock, so versions are queued in the order the
// state was derived, and one writer at a time writes the latest.
func (svc *Service) writeStatus(ctx context.Context, s *Session, st *State, res *TeamResult) {
	svc.queueStatus(ctx, s, st, res, false)
}

// writeStatusSoon is writeStatus for steps: a running session's projection
// is written in the background.
func (svc *Service) writeStatusSoon(ctx context.Context, s *Session, st *State, res *TeamResult) {
	svc.queueStatus(ctx, s, st, res, true)
}

// keepsFiles tells whether the store keeps projections (status.json, the
// final files, the session's directory) worth writing.
func (svc *Service) keepsFiles() bool { return svc.files != nil }

func (svc *Service) queueStatus(ctx context.Context, s *Session, st *State, res *TeamResult, soon bool) {
	if !svc.keepsFiles() {
		return
	}
	if res == nil {
		l := &Ledger{Agents: map[string][]Entry{}}
		res = svc.snapshot(s, l, st)
	}
	// Rendered now, under the lock: the state is the service's, and a later
	// derivation may reuse it.
	write, err := svc.files.Project(Projection{Session: s, State: st, Result: res, At: svc.now()})
	if err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not render the session's status")
		return
	}
	svc.statuses.queue(ctx, s.ID, write, soon && res.Status == StatusRunning)
}

// StatusWritesPending is how many sessions have a status.json write not
// yet made (a running session's is made in the background, after the step
// that queued it returned): a caller about to remove the state directory
// waits for none.
func (svc *Service) StatusWritesPending() int { return svc.statuses.queues.len() }

// statuses writes sessions' status.json versions, the latest first and one
// writer at a time per session.
type statuses struct {
	// queues: id → status.json versions waiting to be written. Held by
	// each writer that queues a version until it is written, so an entry
	// lives exactly while a write is pending and none is ever dropped.
	queues held[string, statusQueue]
	log    zerolog.Logger
}

// queue queues a session's rendered status write, and writes it now, or in
// the background when background is set.
func (sq *statuses) queue(ctx context.Context, id string, write func(ctx context.Context) error, background bool) {
	slot := sq.queues.acquire(id)
	slot.mu.Lock()
	slot.queued++
	slot.latest = write
	start := background && !slot.writing
	if start {
		slot.writing = true
	}
	slot.mu.Unlock()
	// The slot is held until this version is written: by the writer started
	// here, by this call, or else by the background writer already on it,
	// which writes every version queued before it lets go.
	switch {
	case start:
		go func() {
			sq.flush(context.WithoutCancel(ctx), id, slot)
			sq.queues.release(id)
		}()
	case !background:
		sq.flush(ctx, id, slot)
		sq.queues.release(id)
	default:
		sq.queues.release(id)
	}
}

// statusQueue holds the latest projection write of a session not yet run.
type statusQueue struct {
	write   sync.Mutex // one writer at a time, so an older version never lands last
	mu      sync.Mutex
	queued  uint64                          // versions queued
	written uint64                          // versions written
	latest  func(ctx context.Context) error // the latest version's write
	writing bool                            // a background writer is on it
}

// flush runs the latest queued write until none is pending.
func (sq *statuses) flush(ctx context.Context, id string, q *statusQueue) {
	q.write.Lock()
	defer q.write.Unlock()
	for {
		q.mu.Lock()
		if q.written >= q.queued {
			q.writing = false
			q.mu.Unlock()
			return
		}
		v, write := q.queued, q.latest
		q.mu.Unlock()
		if err := write(ctx); err != nil {
			sq.log.Warn().Err(err).Str("session", id).Msg("could not write the session's status")
		}
		q.mu.Lock()
		q.written = v
		if q.written == q.queued {
			q.latest = nil
		}
		q.mu.Unlock()
	}
}
