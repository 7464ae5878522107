package mcp

import (
	"time"

	"github.com/massgen-go/massgen-mcp/criteria"
)

// The results the tools publish are the wire's own types, twins of the
// coordination structs they are converted from (wireconv.go): a field renamed
// or retagged in coordination is a compile error in the conversion or no
// change at all on the wire, never a silent change of a tool's schema. Each
// field keeps the name, order and tags its schema was generated from, so the
// snapshots in testdata/toolsnaps are unchanged by the move. Criteria items
// and times are shared with their own packages.

// TeamResult is the wire form of coordination.TeamResult.
type TeamResult struct {
	SessionID      string         `json:"session_id"`
	Status         string         `json:"status"`
	StopReason     *string        `json:"stop_reason"`
	HowChosen      *string        `json:"how_chosen"`
	Tie            bool           `json:"tie"`
	Winner         *Winner        `json:"winner"`
	FinalAnswer    *string        `json:"final_answer"`
	Consensus      ConsensusView  `json:"consensus"`
	Votes          []VoteView     `json:"votes"`
	Answers        []AnswerView   `json:"answers"`
	NextAgents     []string       `json:"next_agents"`
	Steps          int            `json:"steps"`
	Usage          UsageView      `json:"usage"`
	CostUSD        *float64       `json:"cost_usd"`
	CostEstimated  bool           `json:"cost_estimated,omitempty" jsonschema_description:"Part of cost_usd is an estimate at list prices, not a charge (a CLI agent on a subscription login)."`
	BudgetEnforced bool           `json:"budget_enforced"`
	Duration       float64        `json:"duration_seconds"`
	LastAlive      *time.Time     `json:"last_alive,omitempty" jsonschema_description:"For an interrupted session (its run died): when the run was last alive; duration_seconds stops there. Resume it with run_team{session_id}."`
	SessionDir     string         `json:"session_dir"`
	FinalNote      string         `json:"final_note,omitempty"`
	HowChosenNote  string         `json:"how_chosen_note,omitempty"`
	NotAgreed      string         `json:"not_agreed,omitempty" jsonschema_description:"Set when the winner was not agreed on (a stop by budget, timeout, failures, split votes, max_rounds or finalize forced it): why the run stopped, the spend against the budget, and how the answer was taken."`
	CancelReason   string         `json:"cancel_reason,omitempty" jsonschema_description:"For a cancelled session: why (by request, or the error its run stopped on)."`
	Agents         []AgentUsage   `json:"agents"`
	Dropped        []DroppedAgent `json:"dropped"`
	Degraded       bool           `json:"degraded"`
	Files          []FileView     `json:"files,omitempty"`
	FilesCount     int            `json:"files_count,omitempty"`
	FilesDir       string         `json:"files_dir,omitempty"`
	FilesLeftOut   string         `json:"files_left_out,omitempty"`
	Applied        *Applied       `json:"applied,omitempty"`
	// The brief form's pointers (brief.go): set only when answers were cut.
	Brief            bool      `json:"brief,omitempty"`
	FinalAnswerChars int       `json:"final_answer_chars,omitempty"`
	FinalAnswerURI   string    `json:"final_answer_uri,omitempty"`
	FilesURI         string    `json:"files_uri,omitempty"`
	Changes          *Preview  `json:"changes,omitempty"`
	ChangesPending   bool      `json:"changes_pending,omitempty" jsonschema_description:"The winner's changes to the write context are listed in changes and not written yet: show them, and apply_changes{session_id} writes them once approved."`
	WorkspaceTools   string    `json:"workspace_tools,omitempty" jsonschema_description:"Whether the agents' steps were offered the file tools and run_command, and why, e.g. off (a question with no context)."`
	Estimate         *Estimate `json:"estimate,omitempty" jsonschema_description:"Only for run_team{estimate: true} (status estimate): the team's worst case at list prices; nothing was run."`
}

// Estimate is the wire form of coordination.Estimate.
type Estimate struct {
	Agents         []AgentEstimate `json:"agents"`
	RoundCostUSD   float64         `json:"round_cost_usd"`
	RoundTokens    int64           `json:"round_tokens"`
	SessionCostUSD float64         `json:"session_cost_usd"`
	SessionTokens  int64           `json:"session_tokens"`
	Unpriced       []string        `json:"unpriced,omitempty"`
	CostBudgetUSD  *float64        `json:"cost_budget_usd,omitempty"`
	TokenBudget    *int64          `json:"token_budget,omitempty"`
	Problem        string          `json:"problem,omitempty" jsonschema_description:"Why the budget cannot pay for one round; run_team would refuse the team."`
}

// AgentEstimate is the wire form of coordination.AgentEstimate.
type AgentEstimate struct {
	AgentID        string   `json:"agent_id"`
	Model          string   `json:"model"`
	InputTokens    int64    `json:"input_tokens"`
	OutputTokens   int64    `json:"output_tokens"`
	OutputAssumed  bool     `json:"output_assumed,omitempty"`
	CostUSD        *float64 `json:"cost_usd"`
	OwnPrices      bool     `json:"own_prices,omitempty"`
	SessionCostUSD *float64 `json:"session_cost_usd"`
	SessionTokens  int64    `json:"session_tokens"`
}

// StatusView is the wire form of coordination.StatusView. A reply to
// team_status{since} leaves out what did not change (brief.go): the fields
// that never change, the agents whose rows did not, the result when it did
// not, the events the caller has seen.
type StatusView struct {
	Result        *TeamResult     `json:"result,omitempty"`
	Task          string          `json:"task,omitempty"`
	Rules         *Rules          `json:"rules,omitempty"`
	Seed          int64           `json:"seed,omitempty"`
	Criteria      []criteria.Item `json:"eval_criteria,omitempty"`
	Agents        []AgentStatus   `json:"agents"`
	Revote        []string        `json:"revote_pending"`
	CreatedAt     *time.Time      `json:"created_at,omitempty"`
	Foreign       bool            `json:"written_by_massgen,omitempty"`
	Timeline      []Event         `json:"timeline"`
	Turn          int             `json:"turn,omitempty"`
	Previous      string          `json:"previous,omitempty"`
	TeamName      string          `json:"team_name,omitempty"`
	TimelineCount int             `json:"timeline_count,omitempty" jsonschema_description:"The session's events in all."`
	// Set by team_status, not by the conversion. TimelineOmitted counts
	// the events the status covers (all of the session's, or those
	// after since) that timeline leaves out: the oldest.
	TimelineOmitted int    `json:"timeline_omitted,omitempty" jsonschema_description:"Events this status covers (all, or those after since) left out of timeline, the oldest; timeline_uri has them all."`
	TimelineURI     string `json:"timeline_uri,omitempty"`
	Cursor          string `json:"cursor,omitempty" jsonschema_description:"Pass as since to the next team_status for only what changed."`
	Partial         bool   `json:"partial,omitempty" jsonschema_description:"Only what changed since the cursor given as since."`
}

// StepResult is the wire form of coordination.StepResult.
type StepResult struct {
	SessionID   string         `json:"session_id"`
	AgentID     string         `json:"agent_id"`
	Action      string         `json:"action"`
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

// Winner is the wire form of coordination.Winner.
type Winner struct {
	AgentID string `json:"agent_id"`
	Label   string `json:"label"`
	Model   string `json:"model"`
}

// ConsensusView is the wire form of coordination.ConsensusView.
type ConsensusView struct {
	Rule    string         `json:"rule"`
	Reached bool           `json:"reached"`
	RuleMet bool           `json:"rule_met"`
	Leader  *string        `json:"leader"`
	Tally   map[string]int `json:"tally"`
	// Weights and WeightedTally: consensus weighted only.
	Weights       []VoteWeight       `json:"weights,omitempty"`
	WeightedTally map[string]float64 `json:"weighted_tally,omitempty"`
}

// VoteWeight is the wire form of coordination.VoteWeight: how much an
// agent's answer and vote count, and why.
type VoteWeight struct {
	AgentID string  `json:"agent_id"`
	Weight  float64 `json:"weight"`
	Reason  string  `json:"reason,omitempty"`
}

// VoteView is the wire form of coordination.VoteView.
type VoteView struct {
	Voter       string `json:"voter"`
	Target      string `json:"target"`
	TargetLabel string `json:"target_label"`
	Reason      string `json:"reason"`
	Stale       bool   `json:"stale"`
}

// AnswerView is the wire form of coordination.AnswerView.
type AnswerView struct {
	AgentID string `json:"agent_id"`
	Label   string `json:"label"`
	Model   string `json:"model"`
	Content string `json:"content,omitempty"`
	// The brief form (brief.go): a preview (none for the answer that
	// final_answer already holds), the whole length and where to read it.
	Preview string `json:"preview,omitempty"`
	Chars   int    `json:"chars,omitempty"`
	URI     string `json:"uri,omitempty"`
}

// UsageView is the wire form of coordination.UsageView.
type UsageView struct {
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	Output      int64 `json:"output"`
	Reasoning   int64 `json:"reasoning"`
}

// AgentUsage is the wire form of coordination.AgentUsage.
type AgentUsage struct {
	AgentID string    `json:"agent_id"`
	Model   string    `json:"model"`
	Steps   int       `json:"steps"`
	Usage   UsageView `json:"usage"`
	CostUSD *float64  `json:"cost_usd"`
	// CostEstimated: see TeamResult.CostEstimated.
	CostEstimated bool `json:"cost_estimated,omitempty"`
}

// DroppedAgent is the wire form of coordination.DroppedAgent.
type DroppedAgent struct {
	AgentID      string `json:"agent_id"`
	Model        string `json:"model"`
	Class        string `json:"class"`
	Message      string `json:"message"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

// FileView is the wire form of coordination.FileView.
type FileView struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Applied is the wire form of workspace.Applied.
type Applied struct {
	Context   string   `json:"context"`
	Written   []Change `json:"written"`
	Conflicts []Change `json:"conflicts"`
	Skipped   []Change `json:"skipped"`
	Held      []Change `json:"held,omitempty"`
}

// Preview is the wire form of workspace.Preview.
type Preview struct {
	Context string       `json:"context"`
	Files   []FileChange `json:"files"`
	Count   int          `json:"count"`
	Added   int          `json:"lines_added"`
	Removed int          `json:"lines_removed"`
	// Config: the changes that are tool configuration, listed apart.
	Config      []FileChange `json:"config,omitempty"`
	ConfigCount int          `json:"config_count,omitempty"`
}

// FileChange is the wire form of workspace.FileChange.
type FileChange struct {
	Path    string `json:"path"`
	Op      string `json:"op"`
	Added   int    `json:"lines_added,omitempty"`
	Removed int    `json:"lines_removed,omitempty"`
	Binary  bool   `json:"binary,omitempty"`
	Bytes   int64  `json:"bytes"`
	Link    bool   `json:"symlink,omitempty"`
	Runs    string `json:"runs,omitempty"`
}

// ApplyResult is the wire form of coordination.ApplyResult.
type ApplyResult struct {
	SessionID      string   `json:"session_id"`
	Applied        *Applied `json:"applied"`
	AlreadyApplied bool     `json:"already_applied"`
	// Confirmation is the user's reply when apply_changes asked them
	// (accept, decline or cancel); absent when nothing was asked.
	Confirmation *string `json:"confirmation,omitempty"`
}

// Rules is the wire form of coordination.Rules.
type Rules struct {
	Consensus           string       `json:"consensus" yaml:"consensus"`
	MaxRounds           int          `json:"max_rounds" yaml:"max_rounds"`
	MaxAnswersPerAgent  int          `json:"max_answers_per_agent" yaml:"max_answers_per_agent"`
	TimeoutSeconds      float64      `json:"timeout_seconds" yaml:"timeout_seconds"`
	StepTimeoutSeconds  float64      `json:"step_timeout_seconds" yaml:"step_timeout_seconds"`
	CostBudgetUSD       *float64     `json:"cost_budget_usd" yaml:"cost_budget_usd"`
	TokenBudget         *int64       `json:"token_budget" yaml:"token_budget"`
	MaxAgentFailures    int          `json:"max_agent_failures" yaml:"max_agent_failures"`
	Final               string       `json:"final" yaml:"final"`
	AnswerFormat        string       `json:"answer_format" yaml:"answer_format"`
	EarlyStop           bool         `json:"early_stop" yaml:"early_stop"`
	Aliases             string       `json:"aliases" yaml:"aliases"`
	RotateOwnLast       *bool        `json:"rotate_own_last" yaml:"rotate_own_last"`
	BlindFirst          *bool        `json:"blind_first" yaml:"blind_first"`
	PeerAnswerTokenCap  int          `json:"peer_answer_token_cap" yaml:"peer_answer_token_cap"`
	MaxToolCallsPerStep int          `json:"max_tool_calls_per_step" yaml:"max_tool_calls_per_step"`
	Weights             []VoteWeight `json:"weights,omitempty" yaml:"weights,omitempty"`
	DominantStop        bool         `json:"dominant_stop,omitempty" yaml:"dominant_stop,omitempty"`
	Strict              bool         `json:"strict,omitempty" yaml:"strict"`
}

// AgentStatus is the wire form of coordination.AgentStatus.
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
	LastAlive    *time.Time `json:"last_alive,omitempty" jsonschema_description:"For an agent whose step in flight died with its process (status interrupted): when the step was last alive. Step the agent again to retry it."`
}

// Event is the wire form of coordination.Event.
type Event struct {
	Time    time.Time              `json:"timestamp"`
	Type    string                 `json:"type"`
	Agent   string                 `json:"agent_id,omitempty"`
	Step    int                    `json:"step,omitempty"`
	Message string                 `json:"message"`
	Data    map[string]interface{} `json:"data,omitempty"`
}

// HostView is the wire form of coordination.HostView.
type HostView struct {
	Prompt   string   `json:"prompt"`
	System   string   `json:"system"`
	Actions  []string `json:"actions"`
	VoteEnum []string `json:"vote_enum"`
	Revote   bool     `json:"revote"`
}

// Change is the wire form of workspace.Change.
type Change struct {
	Path   string `json:"path"`
	Op     string `json:"op"`
	Reason string `json:"reason,omitempty"`
}
