package coordination

import (
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// Session statuses.
const (
	StatusRunning   = "running"
	StatusDecided   = "decided"
	StatusFinished  = "finished"
	StatusCancelled = "cancelled"
	StatusFailed    = "failed"
)

// StopReason says why a session stopped (a result's stop_reason).
type StopReason string

// Stop reasons.
const (
	StopConsensus      StopReason = "consensus"
	StopEarlyAgreement StopReason = "early_agreement"
	StopSingleAgent    StopReason = "single_agent"
	StopSplitVote      StopReason = "split_vote"
	StopMaxRounds      StopReason = "max_rounds"
	StopTimeout        StopReason = "timeout"
	StopBudget         StopReason = "budget"
	StopAgentsFailed   StopReason = "agents_failed"
	StopFinalized      StopReason = "finalized"
)

// ForcedFirstNote is a forced_first result's how_chosen_note: MassGen's
// rule ("if no votes exist: use the first answer submitted") picks by
// arrival, which an outer agent must know to weigh the other answers.
const ForcedFirstNote = "no agent voted for any answer, so the winner is the first answer submitted: picked by arrival, not merit; weigh the other answers"

// How a winner was chosen.
const (
	ChosenConsensus      = "consensus"
	ChosenEarlyAgreement = "early_agreement"
	ChosenSingleAgent    = "single_agent"
	ChosenForcedStanding = "forced_standing"
	ChosenForcedCurrent  = "forced_current"
	ChosenForcedFirst    = "forced_first"
)

// TeamResult is what a run returns (docs/DESIGN.md, "The MCP surface translates"), stored as
// final/result.json. While running, fields not known yet are null.
type TeamResult struct {
	SessionID   string        `json:"session_id"`
	Status      string        `json:"status"`
	StopReason  *StopReason   `json:"stop_reason"`
	HowChosen   *string       `json:"how_chosen"`
	Tie         bool          `json:"tie"`
	Winner      *Winner       `json:"winner"`
	FinalAnswer *string       `json:"final_answer"`
	Consensus   ConsensusView `json:"consensus"`
	Votes       []VoteView    `json:"votes"`
	Answers     []AnswerView  `json:"answers"`
	NextAgents  []string      `json:"next_agents"`
	Steps       int           `json:"steps"`
	Usage       UsageView     `json:"usage"`
	CostUSD     *float64      `json:"cost_usd"`
	// CostEstimated says part of the cost is an estimate at list prices,
	// not a charge (a CLI agent on a subscription login).
	CostEstimated  bool    `json:"cost_estimated,omitempty"`
	BudgetEnforced bool    `json:"budget_enforced"`
	Duration       float64 `json:"duration_seconds"`
	// LastAlive is when an interrupted session's run was last known alive
	// (its lease's last heartbeat); Duration stops there (leaserun.go), as
	// a cancelled session's stops at its cancel (Lifecycle.CancelledAt).
	LastAlive  *time.Time `json:"last_alive,omitempty"`
	SessionDir string     `json:"session_dir"`
	FinalNote  string     `json:"final_note,omitempty"`
	// HowChosenNote says in words what how_chosen means when it is not a
	// verdict on merit (forced_first: ForcedFirstNote).
	HowChosenNote string `json:"how_chosen_note,omitempty"`
	// NotAgreed, set on a finished result whose winner the team did not
	// agree on, says why it stopped and how the answer was taken
	// (agreement.go); "" for an agreed winner.
	NotAgreed string `json:"not_agreed,omitempty"`
	// CancelReason, on a cancelled session, says why it was cancelled:
	// by request, its run stopped on an error (which), not started.
	CancelReason string       `json:"cancel_reason,omitempty"`
	Agents       []AgentUsage `json:"agents"`
	// Dropped lists the agents that left the team (dropped.go), so a team
	// that became one model says so; Degraded marks a finished team of two
	// or more in which fewer than two agents ever answered.
	Dropped  []DroppedAgent `json:"dropped"`
	Degraded bool           `json:"degraded"`
	// The winner's files (files.go): the first 50 of its snapshot, how
	// many it has, where they are, and what was applied to a write context.
	Files      []FileView `json:"files,omitempty"`
	FilesCount int        `json:"files_count,omitempty"`
	FilesDir   string     `json:"files_dir,omitempty"`
	// FilesLeftOut says which entries of the winner's workspace its
	// snapshot left out, being no file to read (workspace.Manifest.NotKept);
	// "" for none.
	FilesLeftOut string             `json:"files_left_out,omitempty"`
	Applied      *workspace.Applied `json:"applied,omitempty"`
	// Changes is the winner's diff against the write context (a preview);
	// ChangesPending says it waits for ApplyChanges (apply.go).
	Changes        *workspace.Preview `json:"changes,omitempty"`
	ChangesPending bool               `json:"changes_pending,omitempty"`
	// WorkspaceTools says whether the steps were offered the workspace
	// tools and why ("off (a question with no context)"); "" for a session
	// created before the decision.
	WorkspaceTools string `json:"workspace_tools,omitempty"`
}

// Winner names the winning agent.
type Winner struct {
	AgentID string `json:"agent_id"`
	Label   string `json:"label"`
	Model   string `json:"model"`
}

// ConsensusView is the tally of standing votes by label.
type ConsensusView struct {
	Rule ConsensusRule `json:"rule"`
	// Reached says the session ended on agreement: agreement chose its
	// winner (how_chosen consensus, early_agreement or single_agent). It
	// is false while the session runs, whatever the votes say then: a
	// later answer makes them stale, and the rule is applied only once no
	// agent is due or in flight.
	Reached bool `json:"reached"`
	// RuleMet says the standing votes as they are (under weighted, the
	// answers and votes) meet the rule. While the session runs it may turn
	// false again; it is what a run that settled now would decide on.
	RuleMet bool           `json:"rule_met"`
	Leader  *string        `json:"leader"` // label with the most standing votes, if one leads
	Tally   map[string]int `json:"tally"`
	// Weights, under consensus weighted, are how much each agent's answer
	// and vote counted and why; WeightedTally is each value's summed weight
	// by the label of the answer that wins if it wins.
	Weights       []VoteWeight       `json:"weights,omitempty"`
	WeightedTally map[string]float64 `json:"weighted_tally,omitempty"`
}

// VoteView is an agent's latest vote.
type VoteView struct {
	Voter       string `json:"voter"`
	Target      string `json:"target"`
	TargetLabel string `json:"target_label"`
	Reason      string `json:"reason"`
	Stale       bool   `json:"stale"`
}

// AnswerView is an agent's answer: its latest, or in a finished result
// amended after the end the winner's too, which its agent's newer one
// superseded (listed after it).
type AnswerView struct {
	AgentID string `json:"agent_id"`
	Label   string `json:"label"`
	Model   string `json:"model"`
	Content string `json:"content"`
}

// UsageView is token usage summed over a session or an agent.
type UsageView struct {
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	Output      int64 `json:"output"`
	Reasoning   int64 `json:"reasoning"`
}

// AgentUsage is one agent's totals.
type AgentUsage struct {
	AgentID string    `json:"agent_id"`
	Model   string    `json:"model"`
	Steps   int       `json:"steps"`
	Usage   UsageView `json:"usage"`
	CostUSD *float64  `json:"cost_usd"`
	// CostEstimated: see TeamResult.CostEstimated.
	CostEstimated bool `json:"cost_estimated,omitempty"`
}

// StepResult is what one step returns (docs/DESIGN.md, "The MCP surface translates").
type StepResult struct {
	// state is the session as the landing step left it; the run loop
	// launches from it instead of reading the ledger again.
	state *State
	// model is the stepping agent's model, for Line.
	model string
	// step is the landed entry's step number (0 for a view), for Now.
	step int

	SessionID   string         `json:"session_id"`
	AgentID     string         `json:"agent_id"`
	Action      string         `json:"action"` // new_answer | vote | error | view
	Label       string         `json:"label,omitempty"`
	Target      string         `json:"target,omitempty"`
	TargetLabel string         `json:"target_label,omitempty"`
	ErrorClass  string         `json:"error_class,omitempty"`
	Message     string         `json:"message,omitempty"`
	SeenSteps   map[string]int `json:"seen_steps"`
	Stale       bool           `json:"stale"`
	Consensus   ConsensusView  `json:"consensus"`
	NextAgents  []string       `json:"next_agents"`
	Finished    bool           `json:"finished"`
	Result      *TeamResult    `json:"result,omitempty"`
	View        *HostView      `json:"view,omitempty"`
}

// HostView is what a host agent is shown: the prompt its model would get.
type HostView struct {
	Prompt   string   `json:"prompt"`
	System   string   `json:"system"`
	Actions  []string `json:"actions"`
	VoteEnum []string `json:"vote_enum"`
	Revote   bool     `json:"revote"`
}

// Clone returns a deep copy of a result, so a store can hand out results that
// callers may change without touching what it keeps.
func (r *TeamResult) Clone() *TeamResult {
	if r == nil {
		return nil
	}
	c := *r
	c.StopReason, c.HowChosen, c.FinalAnswer, c.CostUSD = clonePtr(r.StopReason), clonePtr(r.HowChosen), clonePtr(r.FinalAnswer), clonePtr(r.CostUSD)
	c.Winner, c.LastAlive = clonePtr(r.Winner), clonePtr(r.LastAlive)
	c.Consensus.Leader = clonePtr(r.Consensus.Leader)
	if r.Consensus.Tally != nil {
		c.Consensus.Tally = make(map[string]int, len(r.Consensus.Tally))
		for k, v := range r.Consensus.Tally {
			c.Consensus.Tally[k] = v
		}
	}
	c.Votes = append(r.Votes[:0:0], r.Votes...)
	c.Answers = append(r.Answers[:0:0], r.Answers...)
	c.NextAgents = append(r.NextAgents[:0:0], r.NextAgents...)
	c.Agents = append(r.Agents[:0:0], r.Agents...)
	c.Dropped = append(r.Dropped[:0:0], r.Dropped...)
	c.Files = append(r.Files[:0:0], r.Files...)
	c.Applied = r.Applied.Clone()
	c.Changes = r.Changes.Clone()
	for i := range c.Agents {
		c.Agents[i].CostUSD = clonePtr(r.Agents[i].CostUSD)
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Deref is *s, or "" for nil: a result's optional texts (final_answer,
// stop_reason, how_chosen) are pointers so that their JSON can say null.
func Deref[T ~string](s *T) T {
	if s == nil {
		return ""
	}
	return *s
}

// Answered is how many agents have an answer in the result: Answers holds
// one per agent, and the winner's again when its agent answered after the
// end.
func (r *TeamResult) Answered() int {
	seen := map[string]bool{}
	for _, a := range r.Answers {
		seen[a.AgentID] = true
	}
	return len(seen)
}
