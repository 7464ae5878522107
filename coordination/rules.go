package coordination

import (
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ConsensusRule says when the standing votes agree (rule consensus).
type ConsensusRule string

// Consensus rules.
const (
	RuleMajority  ConsensusRule = "majority"
	RulePlurality ConsensusRule = "plurality"
	RuleUnanimous ConsensusRule = "unanimous"
	// RuleWeighted decides by reliability-weighted ballots: each agent's
	// latest answer and standing vote count its weight (Rules.Weights, 1 if
	// not given) for their final value, and the value with the most weight
	// wins; with early_stop, round 0 ends the session when the leading
	// value's weight beats the next one's by SPRTLead and two agents hold it
	// (docs/DESIGN.md, "Weighted votes"). It needs answer_format short.
	RuleWeighted ConsensusRule = "weighted"
)

// FinalStrategy says how a decided session's final answer is written (rule
// final).
type FinalStrategy string

// Final strategies.
const (
	FinalWinner     FinalStrategy = "winner"
	FinalPresent    FinalStrategy = "present"
	FinalSynthesize FinalStrategy = "synthesize"
)

// AnswerFormat says whether answers end in a value that can be compared
// (rule answer_format).
type AnswerFormat string

// Answer formats.
const (
	FormatFree  AnswerFormat = "free"
	FormatShort AnswerFormat = "short"
)

// Alias orders: how agents are numbered agent1..agentN (rule aliases).
const (
	AliasesRandom       = "random"
	AliasesAlphabetical = "alphabetical"
)

// Rules are a session's settings (docs/DESIGN.md, "Sessions and their rules"). A zero field means "use the
// default"; Normalize fills them in.
type Rules struct {
	Consensus          ConsensusRule `json:"consensus" yaml:"consensus"`
	MaxRounds          int           `json:"max_rounds" yaml:"max_rounds"`
	MaxAnswersPerAgent int           `json:"max_answers_per_agent" yaml:"max_answers_per_agent"`
	TimeoutSeconds     float64       `json:"timeout_seconds" yaml:"timeout_seconds"`
	StepTimeoutSeconds float64       `json:"step_timeout_seconds" yaml:"step_timeout_seconds"`
	CostBudgetUSD      *float64      `json:"cost_budget_usd" yaml:"cost_budget_usd"`
	TokenBudget        *int64        `json:"token_budget" yaml:"token_budget"`
	MaxAgentFailures   int           `json:"max_agent_failures" yaml:"max_agent_failures"`
	Final              FinalStrategy `json:"final" yaml:"final"`
	AnswerFormat       AnswerFormat  `json:"answer_format" yaml:"answer_format"`
	EarlyStop          bool          `json:"early_stop" yaml:"early_stop"`
	// Aliases orders the agents' aliases (agentN): random (from the seed) or
	// alphabetical. Files and team files written before the rename say
	// "labels" (oldnames.go).
	Aliases            string `json:"aliases" yaml:"aliases"`
	RotateOwnLast      *bool  `json:"rotate_own_last" yaml:"rotate_own_last"`
	BlindFirst         *bool  `json:"blind_first" yaml:"blind_first"`
	PeerAnswerTokenCap int    `json:"peer_answer_token_cap" yaml:"peer_answer_token_cap"`
	// MaxToolCallsPerStep bounds the tool calls (file tools, commands, MCP
	// tools) an API agent makes in one step before it must answer or vote.
	MaxToolCallsPerStep int `json:"max_tool_calls_per_step" yaml:"max_tool_calls_per_step"`
	// Weights are how much each agent's answer and vote count under
	// consensus weighted, with why (EstimateReliability); an agent not
	// listed counts 1. Empty under every other rule.
	Weights []VoteWeight `json:"weights,omitempty" yaml:"weights,omitempty"`
	// DominantStop, under consensus weighted, ends the session after round
	// 0 when one agent's weight is more than all the others' together: no
	// vote can outweigh it then, so a vote round could change the outcome
	// only by talking that agent round; and when every agent gave the same
	// value and none may answer again, when a vote round could not change
	// it at all (docs/DESIGN.md, "Weighted votes").
	DominantStop bool `json:"dominant_stop,omitempty" yaml:"dominant_stop,omitempty"`
	// Strict fails the session instead of letting the team shrink: an agent
	// without a usable key or model refuses creation, a dropped agent ends
	// the session as failed, and so does a degraded finish.
	Strict bool `json:"strict,omitempty" yaml:"strict"`
}

// The upper ends of the numeric rules' ranges.
const (
	MaxRoundsLimit        = 100               // max_rounds, max_answers_per_agent, max_agent_failures
	MaxTimeoutSeconds     = 30 * 24 * 3600    // timeout_seconds: 30 days (a step-driven session may wait on a person)
	MaxStepTimeoutSeconds = 24 * 3600         // step_timeout_seconds: a day
	MaxCostBudgetUSD      = 1_000_000         // cost_budget_usd
	MaxTokenBudget        = 1_000_000_000_000 // token_budget
	MaxPeerAnswerTokenCap = 1_000_000         // peer_answer_token_cap
	MaxOutputTokensLimit  = 1_000_000         // an agent's max_output_tokens
	MaxToolCallsLimit     = 1000              // max_tool_calls_per_step
	MaxVoteWeight         = 100               // a weight under consensus weighted
)

// DefaultRules are the defaults of docs/DESIGN.md, "Sessions and their rules".
func DefaultRules() Rules {
	t := true
	return Rules{
		Consensus:          RuleMajority,
		MaxRounds:          5,
		MaxAnswersPerAgent: 3,
		TimeoutSeconds:     1800,
		StepTimeoutSeconds: 600,
		MaxAgentFailures:   2,
		Final:              FinalWinner,
		AnswerFormat:       FormatFree,
		Aliases:            AliasesRandom,
		RotateOwnLast:      &t,
		BlindFirst:         &t,
		PeerAnswerTokenCap: 6000,

		MaxToolCallsPerStep: providers.DefaultMaxToolCalls,
	}
}

// budgeted tells whether r sets a budget, in dollars or tokens.
func (r Rules) budgeted() bool { return r.CostBudgetUSD != nil || r.TokenBudget != nil }

// Normalize fills defaults into unset fields and checks every value, so a
// session never stores rules it cannot run.
func (r Rules) Normalize() (Rules, error) {
	r = r.Over(DefaultRules())
	return r, r.Validate()
}

// Validate checks the rules as given: every rule that is set must be in its
// range, and a zero rule, which means "the default", passes. So a request's
// rules can be checked before a team file's go under them (Over), and
// Normalize, which fills the defaults first, checks every rule. The error
// names each rule out of range with its range.
func (r Rules) Validate() error {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	oneOf := func(name string, v string, allowed ...string) {
		if v != "" && !slices.Contains(allowed, v) {
			bad("%s %q is not one of %s", name, v, strings.Join(allowed, ", "))
		}
	}
	// Every number has a range, stated in the refusal: a timeout of 1e10
	// seconds would overflow a time.Duration and end the session at once.
	// The float checks are written so that NaN (YAML's .nan) fails them.
	intIn := func(name string, v, lo, hi int) {
		if v != 0 && (v < lo || v > hi) {
			bad("%s %d must be between %d and %d", name, v, lo, hi)
		}
	}
	floatIn := func(name string, v, hi float64) {
		if !(v > 0 && v <= hi) {
			bad("%s %g must be above 0 and at most %g", name, v, hi)
		}
	}
	oneOf("consensus", string(r.Consensus), string(RuleMajority), string(RulePlurality), string(RuleUnanimous), string(RuleWeighted))
	if r.Consensus == RuleWeighted && r.AnswerFormat != "" && r.AnswerFormat != FormatShort {
		bad("consensus weighted needs answer_format short (ballots are pooled by final value)")
	}
	seen := map[string]bool{}
	for _, w := range r.Weights {
		switch {
		case w.Agent == "":
			bad("a weight names no agent_id")
		case seen[w.Agent]:
			bad("weights name %s twice", w.Agent)
		case !(w.Weight > 0 && w.Weight <= MaxVoteWeight):
			bad("weight %g of %s must be above 0 and at most %g", w.Weight, w.Agent, float64(MaxVoteWeight))
		}
		seen[w.Agent] = true
	}
	if len(r.Weights) > 0 && r.Consensus != "" && r.Consensus != RuleWeighted {
		bad("weights count only under consensus weighted, not %s", r.Consensus)
	}
	if r.DominantStop && r.Consensus != "" && r.Consensus != RuleWeighted {
		bad("dominant_stop reads the weights of consensus weighted, not %s", r.Consensus)
	}
	intIn("max_rounds", r.MaxRounds, 1, MaxRoundsLimit)
	intIn("max_answers_per_agent", r.MaxAnswersPerAgent, 1, MaxRoundsLimit)
	if r.TimeoutSeconds != 0 {
		floatIn("timeout_seconds", r.TimeoutSeconds, MaxTimeoutSeconds)
	}
	if r.StepTimeoutSeconds != 0 {
		floatIn("step_timeout_seconds", r.StepTimeoutSeconds, MaxStepTimeoutSeconds)
	}
	if r.CostBudgetUSD != nil {
		floatIn("cost_budget_usd", *r.CostBudgetUSD, MaxCostBudgetUSD)
	}
	if r.TokenBudget != nil && (*r.TokenBudget <= 0 || *r.TokenBudget > MaxTokenBudget) {
		bad("token_budget %d must be between 1 and %d", *r.TokenBudget, int64(MaxTokenBudget))
	}
	intIn("max_agent_failures", r.MaxAgentFailures, 1, MaxRoundsLimit)
	oneOf("final", string(r.Final), string(FinalWinner), string(FinalPresent), string(FinalSynthesize))
	oneOf("answer_format", string(r.AnswerFormat), string(FormatFree), string(FormatShort))
	// Unset, answer_format may still come from the rules this set goes over.
	if r.EarlyStop && r.AnswerFormat != "" && r.AnswerFormat != FormatShort {
		bad("early_stop needs answer_format short (free answers have no final value to compare)")
	}
	oneOf("aliases", r.Aliases, AliasesRandom, AliasesAlphabetical)
	intIn("peer_answer_token_cap", r.PeerAnswerTokenCap, 100, MaxPeerAnswerTokenCap)
	intIn("max_tool_calls_per_step", r.MaxToolCallsPerStep, 1, MaxToolCallsLimit)
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrBadSettings, strings.Join(problems, "; "))
	}
	return nil
}

// Over is r laid over base: every rule r sets replaces base's, and a rule r
// leaves zero keeps base's (a true flag cannot be unset by a later false).
// It is the one overlay: a request's rules over a team file's (mcp), a
// command's flags over its --config file (the CLI).
func (r Rules) Over(base Rules) Rules {
	out := base
	if r.Consensus != "" {
		out.Consensus = r.Consensus
	}
	if r.MaxRounds != 0 {
		out.MaxRounds = r.MaxRounds
	}
	if r.MaxAnswersPerAgent != 0 {
		out.MaxAnswersPerAgent = r.MaxAnswersPerAgent
	}
	if r.TimeoutSeconds != 0 {
		out.TimeoutSeconds = r.TimeoutSeconds
	}
	if r.StepTimeoutSeconds != 0 {
		out.StepTimeoutSeconds = r.StepTimeoutSeconds
	}
	if r.CostBudgetUSD != nil {
		out.CostBudgetUSD = r.CostBudgetUSD
	}
	if r.TokenBudget != nil {
		out.TokenBudget = r.TokenBudget
	}
	if r.MaxAgentFailures != 0 {
		out.MaxAgentFailures = r.MaxAgentFailures
	}
	if r.Final != "" {
		out.Final = r.Final
	}
	if r.AnswerFormat != "" {
		out.AnswerFormat = r.AnswerFormat
	}
	out.EarlyStop = out.EarlyStop || r.EarlyStop
	if r.Aliases != "" {
		out.Aliases = r.Aliases
	}
	if r.RotateOwnLast != nil {
		out.RotateOwnLast = r.RotateOwnLast
	}
	if r.BlindFirst != nil {
		out.BlindFirst = r.BlindFirst
	}
	if r.PeerAnswerTokenCap != 0 {
		out.PeerAnswerTokenCap = r.PeerAnswerTokenCap
	}
	if r.MaxToolCallsPerStep != 0 {
		out.MaxToolCallsPerStep = r.MaxToolCallsPerStep
	}
	if len(r.Weights) > 0 {
		out.Weights = r.Weights
	}
	out.DominantStop = out.DominantStop || r.DominantStop
	out.Strict = out.Strict || r.Strict
	return out
}

func (r Rules) rotateOwnLast() bool { return r.RotateOwnLast == nil || *r.RotateOwnLast }
func (r Rules) blindFirst() bool    { return r.BlindFirst == nil || *r.BlindFirst }
func (r Rules) short() bool         { return r.AnswerFormat == FormatShort }

// weight is how much an agent's ballot counts under consensus weighted.
func (r Rules) weight(id string) float64 {
	for _, w := range r.Weights {
		if w.Agent == id {
			return w.Weight
		}
	}
	return 1
}
