package webui

import (
	"context"
	"sort"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// sessionState is what a session page shows, as one JSON document: the
// page's first load and every server-sent event carry it whole. Every
// picture and line in it is coordination/report's; webui adds only the
// answers' HTML and diffs.
type sessionState struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	// Team is the team's name (a chat model's, massgen/NAME) and Turn and
	// Previous place a follow-up turn; empty for a first turn named by its
	// models.
	Team     string `json:"team,omitempty"`
	Turn     int    `json:"turn,omitempty"`
	Previous string `json:"previous,omitempty"`
	Status   string `json:"status"`
	Outcome  string `json:"outcome"`
	// StopReason is why the session stopped, "" while it has not: the
	// page says it where a failed run's final answer would be.
	StopReason string `json:"stop_reason,omitempty"`
	Summary    string `json:"summary"`
	Cost       string `json:"cost"`
	Steps      int    `json:"steps"`
	Running    bool   `json:"running"`
	// Elsewhere says another replica (or process) sharing the store holds
	// the session's run, alive: the page watches it there, and a Resume
	// here would be refused.
	Elsewhere bool        `json:"running_elsewhere,omitempty"`
	CanCancel bool        `json:"can_cancel"`
	CanResume bool        `json:"can_resume"`
	Agents    []agentCard `json:"agents"`
	Map       string      `json:"map_svg"`
	Needs     string      `json:"needs"`
	Swimlane  string      `json:"swimlane"`
	Answers   []answer    `json:"answers"`
	Final     string      `json:"final_html,omitempty"`
	Winner    string      `json:"winner,omitempty"`
	Files     []file      `json:"files"`
	Approvals []approval  `json:"approvals"`
	// Permissions is the audit of the agents' permission decisions; nil
	// when there is none.
	Permissions *permissionLog `json:"permissions,omitempty"`
}

type agentCard struct {
	ID        string `json:"id"`
	Model     string `json:"model"`
	Status    string `json:"status"`
	Steps     int    `json:"steps"`
	Answers   int    `json:"answers"`
	Latest    string `json:"latest,omitempty"`
	Vote      string `json:"vote,omitempty"`
	Cost      string `json:"cost"`
	LastError string `json:"last_error,omitempty"`
	Winner    bool   `json:"winner,omitempty"`
}

// answer is one answer as it landed, rendered, with its diff against the
// same agent's previous answer (none for a first one).
type answer struct {
	Label string     `json:"label"`
	Agent string     `json:"agent"`
	Step  int        `json:"step"`
	At    string     `json:"at"`
	HTML  string     `json:"html"`
	Diff  []diffLine `json:"diff,omitempty"`
	t     time.Time
}

type file struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// swimlaneWidth is the timeline's width in characters; the page scrolls
// it sideways on a narrow screen.
const swimlaneWidth = 120

// buildState reads a session as it stands, without deciding or writing
// anything (Service.Inspect): watching a team never changes it.
func buildState(ctx context.Context, svc *coordination.Service, id string) (*sessionState, error) {
	v, err := svc.Inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	l, err := svc.Ledger(ctx, id)
	if err != nil {
		return nil, err
	}
	r := v.Result
	_, running := svc.Running(id)
	st := &sessionState{
		ID: id, Task: v.Task, Team: v.TeamName, Turn: v.Turn, Previous: v.Previous, Status: r.Status, Outcome: viewPlace.Outcome(r), Summary: viewPlace.Summary(r),
		StopReason: string(coordination.Deref(r.StopReason)),
		Cost:       report.Cost(r.CostUSD), Steps: r.Steps, Running: running,
		Map: report.ConsensusMapSVG(v), Needs: report.BuildGraph(v).Needs(),
		Agents: []agentCard{}, Answers: []answer{}, Files: []file{}, Approvals: pendingApprovals(ctx, svc, id),
		Permissions: permissionAudit(ctx, svc, id),
	}
	live := r.Status == coordination.StatusRunning || r.Status == coordination.StatusDecided
	// Only a live session not run here can be run elsewhere: one lease
	// read, and none for a session this replica runs or that has ended.
	st.Elsewhere = live && !running && svc.HeldElsewhere(ctx, id)
	st.CanCancel = live
	st.CanResume = r.Status == coordination.StatusInterrupted || r.Status == coordination.StatusCancelled || (live && !running && !st.Elsewhere)
	ids := make([]string, len(v.Agents))
	for i, a := range v.Agents {
		ids[i] = a.ID
		c := agentCard{ID: a.ID, Model: a.Model, Status: a.Status, Steps: a.Steps, Answers: a.Answers, Latest: a.LatestLabel,
			Cost: report.Cost(a.Usage.CostUSD), LastError: a.LastError, Winner: r.Winner != nil && r.Winner.AgentID == a.ID}
		if a.Vote != nil {
			c.Vote = a.Vote.TargetLabel
			if !a.StandingVote || a.Vote.Stale {
				c.Vote += " (stale)"
			}
		}
		st.Agents = append(st.Agents, c)
	}
	st.Swimlane = report.Swimlane(ids, l, v.CreatedAt, swimlaneWidth)
	st.Answers = answers(ids, l, v.CreatedAt)
	if r.FinalAnswer != nil {
		st.Final = markdownHTML(*r.FinalAnswer)
	}
	if r.Winner != nil {
		st.Winner = r.Winner.Label
		if snap, err := svc.AnswerFiles(ctx, id, r.Winner.Label, ""); err == nil {
			for _, f := range snap.Files {
				st.Files = append(st.Files, file{Path: f.Path, Bytes: f.Bytes})
			}
		}
	}
	return st, nil
}

// answers lists every answer in the order they landed, each diffed against
// its agent's previous one.
func answers(agents []string, l *coordination.Ledger, start time.Time) []answer {
	out := []answer{}
	for _, id := range agents {
		prev := ""
		first := true
		for _, e := range l.Agents[id] {
			if e.Kind != coordination.KindAnswer {
				continue
			}
			a := answer{Label: e.Label, Agent: id, Step: e.Step, At: offset(e.Time.Sub(start)), HTML: markdownHTML(e.Content), t: e.Time}
			if !first {
				a.Diff = diffLines(prev, e.Content)
			}
			out = append(out, a)
			prev, first = e.Content, false
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t.Before(out[j].t) })
	return out
}

// offset is a time since the session began, as the swimlane heads it.
func offset(d time.Duration) string {
	return "+" + d.Round(100*time.Millisecond).String()
}
