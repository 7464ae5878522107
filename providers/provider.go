package providers

import (
	"context"
	"encoding/json"
	"time"
)

// Workflow tool names, as MassGen names them.
const (
	ToolNewAnswer = "new_answer"
	ToolVote      = "vote"
)

// Provider runs one agent step: it sends the request to its model and reports
// the workflow calls the model made. It never validates them against the
// protocol; coordination does that and may call again with feedback.
type Provider interface {
	Step(ctx context.Context, req Request) (Action, Usage, error)
}

// Tool is one workflow tool offered to the model, with its JSON schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
}

// Purpose says why a provider is called: a protocol step or a final call.
type Purpose string

const (
	PurposeStep       Purpose = "step"       // an ordinary coordination step
	PurposePresent    Purpose = "present"    // the winner writes the final deliverable
	PurposeSynthesize Purpose = "synthesize" // a neutral merge of every latest answer
	PurposeCriteria   Purpose = "criteria"   // write evaluation criteria for a task (package criteria), through one submit_criteria call
)

// ShownAnswer is one peer answer as the acting agent sees it: by alias, never by id.
type ShownAnswer struct {
	Alias   string `json:"alias"`   // the peer's alias, e.g. "agent2"
	Label   string `json:"label"`   // the answer's label, e.g. "agent2.1"
	Content string `json:"content"` // the answer text, whole (the prompt may cut it)
	// Files is the answer's snapshot, read-only in FilesDir (shown to the
	// model as peers/<alias>/); small text files carry their content.
	Files    []FileInfo `json:"files,omitempty"`
	FilesDir string     `json:"files_dir,omitempty"`
}

// FileInfo is one file of a workspace snapshot. Content is filled for small
// text files shown to a model (and read by sim); larger ones are listed only.
type FileInfo struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	Content string `json:"content,omitempty"`
}

// AnswerFile is a file a model delivers inline with new_answer.
type AnswerFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// ContextDir is a project directory the agent may read (and, for the write
// context, whose copy is its workspace).
type ContextDir struct {
	Name  string `json:"name"` // shown as context/<name>/
	Path  string `json:"path"`
	Write bool   `json:"write,omitempty"`
}

// Turn is an earlier attempt within the same step that coordination refused,
// with the reason, so the provider can replay it to the model as feedback.
type Turn struct {
	Reply   Action `json:"reply"`
	Problem string `json:"problem"`
}

// Request is everything a provider needs for one call.
//
// System and Prompt are the rendered text real models receive; StablePrefix is
// the leading part of Prompt that does not change between an agent's steps
// (task, context, criteria), which providers with prompt caches mark as such.
// The structured fields below repeat what the text says, for providers that
// reason over structure instead of text (sim) and for tests.
type Request struct {
	Purpose      Purpose `json:"purpose"`
	System       string  `json:"system"`
	Prompt       string  `json:"prompt"`
	StablePrefix string  `json:"stable_prefix"`
	Tools        []Tool  `json:"tools"`
	History      []Turn  `json:"history,omitempty"` // refused attempts of this step, oldest first

	Task  string        `json:"task"`
	Shown []ShownAnswer `json:"shown,omitempty"` // in the order the prompt shows them
	// Workspace is the agent's live workspace, its working directory for the
	// step ("" when the session keeps no files). What a step leaves there is
	// snapshotted with its answer, and rolled back after a vote or an error.
	Workspace string       `json:"workspace,omitempty"`
	Contexts  []ContextDir `json:"contexts,omitempty"`
	// Images come with the task, for every step and final call of an agent
	// whose model takes them (TakesImages): an API adapter sends them with
	// the prompt in its wire format, a CLI agent finds them as files.
	Images      []Image  `json:"-"`
	VoteEnum    []string `json:"vote_enum,omitempty"`
	Revote      bool     `json:"revote,omitempty"`
	ShortAnswer bool     `json:"short_answer,omitempty"`
	// Review is set in a checkpoint review session, whose new_answer takes a
	// plan, a verdict and concerns.
	Review *ReviewBrief `json:"review,omitempty"`

	SessionSeed int64 `json:"session_seed"`
	// SessionID and SessionCreated name the session, and when it was
	// created: they tell a session made again under a deleted one's id
	// (even with the same seed) from that one, and one session from
	// another, for a CLI agent keeping private directories for its agents.
	// Never shown to the model.
	SessionID      string    `json:"-"`
	SessionCreated time.Time `json:"-"`
	AgentID        string    `json:"agent_id"` // the real id; never shown to the model
	Self           string    `json:"self"`     // the agent's own alias (agentN); never shown to the model
	StepNumber     int       `json:"step_number"`
	Attempt        int       `json:"attempt"` // 0 for the first try

	Temperature     *float64 `json:"temperature,omitempty"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	ReasoningEffort string   `json:"reasoning_effort,omitempty"` // minimal|low|medium|high, for reasoning models

	// Watch, when set, hears the call's output as it streams (never stored).
	Watch Watcher `json:"-"`

	// Toolbox, when set, is what the agent may call besides the workflow
	// tools in this step; MaxToolCalls bounds the calls of the step's loop
	// (0: the default, 40). WebSearch asks for the API's own web search tool.
	Toolbox      Toolbox `json:"-"`
	MaxToolCalls int     `json:"max_tool_calls,omitempty"`
	WebSearch    bool    `json:"web_search,omitempty"`
	// TokenBudget, when positive, bounds the tokens (input plus output)
	// the step's loop may spend over all its turns: what is left of the
	// session's token_budget. Once spent, no further tool call runs.
	TokenBudget int64 `json:"token_budget,omitempty"`
	// Spend, when set, is the session's budget as the step sees it while it
	// runs: a provider that learns its usage turn by turn (a CLI agent's
	// stream, an API agent's tool loop) reports it there and stops once the
	// session's budget is spent.
	Spend Spend `json:"-"`
	// BeforeRetry, when set, is asked before the call is tried again after
	// a transient failure (the resilience layer's retries), with what its
	// tries so far spent: it returns why another try does not fit the
	// budget that pays for it, or "" to let it go. Spend's check lets a
	// retry go while the budget is not yet spent; a caller that needs each
	// try's worst case to fit (a criteria call) says so here.
	BeforeRetry func(spent Usage) string `json:"-"`
	// Record, when set, hears every tool call, command and file change of the
	// step, for its tools.jsonl.
	Record Recorder `json:"-"`
	// Permits, when set, decides each action the agent takes and keeps the
	// audit (a CLI agent: the calls its CLI lets the step see, and its
	// coarse mode); nil applies no permission rules.
	Permits Permits `json:"-"`
}

// ReviewBrief is a checkpoint review's setup in structured form, beside the
// prompt text that states the same to real models (which also carries the
// built-in safety policy and the plan schema).
type ReviewBrief struct {
	Objective string `json:"objective"`
	// DraftPlan is the plan to verify, as JSON in the plan schema; nil when
	// the team writes the plan.
	DraftPlan json.RawMessage `json:"draft_plan,omitempty"`
	// DraftProblems are where the draft breaks the plan schema, as
	// coordination words them.
	DraftProblems []string     `json:"draft_problems,omitempty"`
	Goals         []ReviewGoal `json:"action_goals,omitempty"`
	// Policy holds the caller's rules, added to the built-in policy.
	Policy []string `json:"safety_policy,omitempty"`
}

// ReviewGoal is one action the caller wants approved at the level of a tool
// call.
type ReviewGoal struct {
	ID             string   `json:"id"`
	Goal           string   `json:"goal"`
	PreferredTools []string `json:"preferred_tools,omitempty"`
	Constraints    []string `json:"constraints,omitempty"`
}

// Action is what the model did: the workflow calls it made, in order, and any
// plain text it wrote besides.
type Action struct {
	Calls []ToolCall `json:"calls"`
	Text  string     `json:"text,omitempty"`
	// Raw is provider-specific replay data, opaque to coordination, which
	// only carries it back in Turn.Reply: an adapter keeps here what it needs
	// to replay this reply exactly on the next attempt (Gemini keeps the
	// model's parts with their thought signatures, which Gemini 3 requires
	// echoed back).
	Raw json.RawMessage `json:"raw,omitempty"`
}

// ToolCall is one workflow call with its raw JSON arguments.
type ToolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"arguments"`
}

// NewAnswerCall builds a new_answer call.
func NewAnswerCall(content string) ToolCall {
	args, _ := json.Marshal(struct { // a struct encodes faster than a map, to the same bytes
		Content string `json:"content"`
	}{content})
	return ToolCall{Name: ToolNewAnswer, Args: args}
}

// NewAnswerFilesCall builds a new_answer call that delivers files.
func NewAnswerFilesCall(content string, files []AnswerFile) ToolCall {
	if len(files) == 0 {
		return NewAnswerCall(content)
	}
	args, _ := json.Marshal(struct {
		Content string       `json:"content"`
		Files   []AnswerFile `json:"files"`
	}{content, files})
	return ToolCall{Name: ToolNewAnswer, Args: args}
}

// VoteCall builds a vote call for an alias (agentN).
func VoteCall(agent, reason string) ToolCall {
	args, _ := json.Marshal(struct { // keys in the order a map would sort them
		AgentID string `json:"agent_id"`
		Reason  string `json:"reason"`
	}{agent, reason})
	return ToolCall{Name: ToolVote, Args: args}
}

// Usage is the normalised token usage of one call (or the sum of several) and
// its cost in USD, nil when the price of the model is unknown.
type Usage struct {
	Input       int64    `json:"input"`
	CachedInput int64    `json:"cached_input"`
	Output      int64    `json:"output"`
	Reasoning   int64    `json:"reasoning"`
	CostUSD     *float64 `json:"cost_usd"`
	// CostEstimated says the cost is an estimate at list prices, not what
	// was charged: a CLI agent logged in with a subscription reports one,
	// and a call whose stream ended before its usage report, or whose
	// server reported zero counts, is charged one (Charge), its counts
	// estimated too.
	CostEstimated bool `json:"cost_estimated,omitempty"`
}

// Add sums two usages; the cost stays known only if both are known.
func (u Usage) Add(o Usage) Usage {
	s := Usage{
		Input:       u.Input + o.Input,
		CachedInput: u.CachedInput + o.CachedInput,
		Output:      u.Output + o.Output,
		Reasoning:   u.Reasoning + o.Reasoning,
		// One estimated part makes the sum an estimate.
		CostEstimated: u.CostEstimated || o.CostEstimated,
	}
	if u.CostUSD != nil && o.CostUSD != nil {
		c := *u.CostUSD + *o.CostUSD
		s.CostUSD = &c
	}
	return s
}

// Tokens is every token the call consumed (input plus output).
func (u Usage) Tokens() int64 { return u.Input + u.Output }

// MaxReportedTokens bounds each count an API reports for one call: far
// above any real call (a trillion tokens), low enough that no sum of counts
// a session can hold overflows.
const MaxReportedTokens int64 = 1 << 40

// Sane is a usage as a server reported it, made safe to count against a
// budget: every count within [0, MaxReportedTokens] (a negative count from a
// buggy or hostile server would lower the session's spend, an absurd one
// would wrap the sums), the cached part no more than the input, and a cost
// that is not negative or NaN (0 then). Each adapter applies it where it
// reads the wire's usage.
func (u Usage) Sane() Usage {
	c := SaneCount
	u.Input, u.Output, u.Reasoning = c(u.Input), c(u.Output), c(u.Reasoning)
	u.CachedInput = min(c(u.CachedInput), u.Input)
	if u.CostUSD != nil && !(*u.CostUSD >= 0) {
		z := 0.0
		u.CostUSD = &z
	}
	return u
}

// SaneCount is one token count a server reported, within [0,
// MaxReportedTokens]: what Sane does to each count, for an adapter that
// keeps counts of its own (Anthropic's cache writes).
func SaneCount(v int64) int64 { return min(max(v, 0), MaxReportedTokens) }

// Free is a usage of nothing at a known cost of zero: the start of any sum.
func Free() Usage {
	z := 0.0
	return Usage{CostUSD: &z}
}
