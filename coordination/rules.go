package coordination

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Consensus rules.
const (
	RuleMajority  = "majority"
	RulePlurality = "plurality"
	RuleUnanimous = "unanimous"
)

// Final strategies.
const (
	FinalWinner     = "winner"
	FinalPresent    = "present"
	FinalSynthesize = "synthesize"
)

// Answer formats.
const (
	FormatFree  = "free"
	FormatShort = "short"
)

// Alias orders: how agents are numbered agent1..agentN (rule aliases).
const (
	AliasesRandom       = "random"
	AliasesAlphabetical = "alphabetical"
)

// Rules are a session's settings (DESIGN.md §2). A zero field means "use the
// default"; Normalize fills them in.
type Rules struct {
	Consensus          string   `json:"consensus" yaml:"consensus"`
	MaxRounds          int      `json:"max_rounds" yaml:"max_rounds"`
	MaxAnswersPerAgent int      `json:"max_answers_per_agent" yaml:"max_answers_per_agent"`
	TimeoutSeconds     float64  `json:"timeout_seconds" yaml:"timeout_seconds"`
	StepTimeoutSeconds float64  `json:"step_timeout_seconds" yaml:"step_timeout_seconds"`
	CostBudgetUSD      *float64 `json:"cost_budget_usd" yaml:"cost_budget_usd"`
	TokenBudget        *int64   `json:"token_budget" yaml:"token_budget"`
	MaxAgentFailures   int      `json:"max_agent_failures" yaml:"max_agent_failures"`
	Final              string   `json:"final" yaml:"final"`
	AnswerFormat       string   `json:"answer_format" yaml:"answer_format"`
	EarlyStop          bool     `json:"early_stop" yaml:"early_stop"`
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
)

// DefaultRules are the defaults of DESIGN.md §2.
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

// Normalize fills defaults into unset fields and checks every value, so a
// session never stores rules it cannot run.
func (r Rules) Normalize() (Rules, error) {
	d := DefaultRules()
	if r.Consensus == "" {
		r.Consensus = d.Consensus
	}
	if r.MaxRounds == 0 {
		r.MaxRounds = d.MaxRounds
	}
	if r.MaxAnswersPerAgent == 0 {
		r.MaxAnswersPerAgent = d.MaxAnswersPerAgent
	}
	if r.TimeoutSeconds == 0 {
		r.TimeoutSeconds = d.TimeoutSeconds
	}
	if r.StepTimeoutSeconds == 0 {
		r.StepTimeoutSeconds = d.StepTimeoutSeconds
	}
	if r.MaxAgentFailures == 0 {
		r.MaxAgentFailures = d.MaxAgentFailures
	}
	if r.Final == "" {
		r.Final = d.Final
	}
	if r.AnswerFormat == "" {
		r.AnswerFormat = d.AnswerFormat
	}
	if r.Aliases == "" {
		r.Aliases = d.Aliases
	}
	if r.RotateOwnLast == nil {
		r.RotateOwnLast = d.RotateOwnLast
	}
	if r.BlindFirst == nil {
		r.BlindFirst = d.BlindFirst
	}
	if r.PeerAnswerTokenCap == 0 {
		r.PeerAnswerTokenCap = d.PeerAnswerTokenCap
	}
	if r.MaxToolCallsPerStep == 0 {
		r.MaxToolCallsPerStep = d.MaxToolCallsPerStep
	}

	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch r.Consensus {
	case RuleMajority, RulePlurality, RuleUnanimous:
	default:
		bad("consensus %q is not one of majority, plurality, unanimous", r.Consensus)
	}
	// Every number has a range, stated in the refusal: a timeout of 1e10
	// seconds would overflow a time.Duration and end the session at once.
	// The float checks are written so that NaN (YAML's .nan) fails them.
	intIn := func(name string, v, lo, hi int) {
		if v < lo || v > hi {
			bad("%s %d must be between %d and %d", name, v, lo, hi)
		}
	}
	floatIn := func(name string, v, hi float64) {
		if !(v > 0 && v <= hi) {
			bad("%s %g must be above 0 and at most %g", name, v, hi)
		}
	}
	intIn("max_rounds", r.MaxRounds, 1, MaxRoundsLimit)
	intIn("max_answers_per_agent", r.MaxAnswersPerAgent, 1, MaxRoundsLimit)
	floatIn("timeout_seconds", r.TimeoutSeconds, MaxTimeoutSeconds)
	floatIn("step_timeout_seconds", r.StepTimeoutSeconds, MaxStepTimeoutSeconds)
	if r.CostBudgetUSD != nil {
		floatIn("cost_budget_usd", *r.CostBudgetUSD, MaxCostBudgetUSD)
	}
	if r.TokenBudget != nil && (*r.TokenBudget <= 0 || *r.TokenBudget > MaxTokenBudget) {
		bad("token_budget %d must be between 1 and %d", *r.TokenBudget, int64(MaxTokenBudget))
	}
	intIn("max_agent_failures", r.MaxAgentFailures, 1, MaxRoundsLimit)
	switch r.Final {
	case FinalWinner, FinalPresent, FinalSynthesize:
	default:
		bad("final %q is not one of winner, present, synthesize", r.Final)
	}
	switch r.AnswerFormat {
	case FormatFree, FormatShort:
	default:
		bad("answer_format %q is not one of free, short", r.AnswerFormat)
	}
	if r.EarlyStop && r.AnswerFormat != FormatShort {
		bad("early_stop needs answer_format short (free answers have no final value to compare)")
	}
	switch r.Aliases {
	case AliasesRandom, AliasesAlphabetical:
	default:
		bad("aliases %q is not one of random, alphabetical", r.Aliases)
	}
	intIn("peer_answer_token_cap", r.PeerAnswerTokenCap, 100, MaxPeerAnswerTokenCap)
	intIn("max_tool_calls_per_step", r.MaxToolCallsPerStep, 1, MaxToolCallsLimit)
	if len(problems) > 0 {
		return r, fmt.Errorf("%w: %s", ErrBadSettings, strings.Join(problems, "; "))
	}
	return r, nil
}

func (r Rules) rotateOwnLast() bool { return r.RotateOwnLast == nil || *r.RotateOwnLast }
func (r Rules) blindFirst() bool    { return r.BlindFirst == nil || *r.BlindFirst }
func (r Rules) short() bool         { return r.AnswerFormat == FormatShort }
