package coordination

import (
	"math"
	"strings"
	"testing"
)

// TestEveryNumericRuleIsRangeChecked: each number out of range is refused
// with its allowed range in the message, including values that would
// overflow a time.Duration (1e10 seconds) and NaN.
func TestEveryNumericRuleIsRangeChecked(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name string
		r    Rules
		want string
	}{
		{"max_rounds", Rules{MaxRounds: 101}, "max_rounds 101 must be between 1 and 100"},
		{"max_rounds", Rules{MaxRounds: -1}, "between 1 and 100"},
		{"max_answers_per_agent", Rules{MaxAnswersPerAgent: 1000}, "max_answers_per_agent 1000 must be between 1 and 100"},
		{"timeout_seconds", Rules{TimeoutSeconds: 1e10}, "timeout_seconds 1e+10 must be above 0 and at most 2.592e+06"},
		{"timeout_seconds", Rules{TimeoutSeconds: -5}, "at most 2.592e+06"},
		{"timeout_seconds", Rules{TimeoutSeconds: math.NaN()}, "timeout_seconds NaN"},
		{"step_timeout_seconds", Rules{StepTimeoutSeconds: 1e12}, "step_timeout_seconds 1e+12 must be above 0 and at most 86400"},
		{"cost_budget_usd", Rules{CostBudgetUSD: f(1e300)}, "cost_budget_usd 1e+300 must be above 0 and at most 1e+06"},
		{"cost_budget_usd", Rules{CostBudgetUSD: f(0)}, "above 0"},
		{"token_budget", Rules{TokenBudget: i(math.MaxInt64)}, "token_budget 9223372036854775807 must be between 1 and 1000000000000"},
		{"max_agent_failures", Rules{MaxAgentFailures: 500}, "max_agent_failures 500 must be between 1 and 100"},
		{"peer_answer_token_cap", Rules{PeerAnswerTokenCap: 50}, "peer_answer_token_cap 50 must be between 100 and 1000000"},
		{"peer_answer_token_cap", Rules{PeerAnswerTokenCap: 1 << 40}, "between 100 and 1000000"},
	} {
		_, err := c.r.Normalize()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// The ends of every range are accepted.
	top := Rules{MaxRounds: 100, MaxAnswersPerAgent: 100, TimeoutSeconds: MaxTimeoutSeconds, StepTimeoutSeconds: MaxStepTimeoutSeconds,
		CostBudgetUSD: f(MaxCostBudgetUSD), TokenBudget: i(MaxTokenBudget), MaxAgentFailures: 100, PeerAnswerTokenCap: MaxPeerAnswerTokenCap}
	if _, err := top.Normalize(); err != nil {
		t.Errorf("the top of every range: %v", err)
	}
}
