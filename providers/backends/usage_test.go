package backends

import (
	"context"
	"math"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestWireUsageThatIsNegativeOrAbsurdNeverLowersWhatAStepSpent plays, through
// every API family's real SDK, a reply whose usage is garbage: a negative
// token count (a buggy or hostile OpenAI-compatible server), and counts so
// large that input plus output overflows int64. A step's usage is what the
// session's cost_budget_usd and token_budget are counted against; a negative
// count, a negative cost, or a sum that wraps to negative would lower the
// session's spend and let the budget never bind. Whatever the wire says, a
// step's usage must be no negative count, no negative cost, and Tokens()
// must not be negative.
func TestWireUsageThatIsNegativeOrAbsurdNeverLowersWhatAStepSpent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage fake.Usage
	}{
		{"negative", fake.Usage{Input: -50_000_000, Output: -3}},
		{"overflowing", fake.Usage{Input: math.MaxInt64 / 2, Output: math.MaxInt64/2 + 10}},
	} {
		for _, model := range []string{"openai/gpt-5-mini", "claude/claude-haiku-4-5", "gemini/gemini-2.5-flash", "grok/grok-4"} {
			if tc.name == "overflowing" && model == "gemini/gemini-2.5-flash" {
				continue // Gemini's counts are int32 in its SDK, which refuses larger ones
			}
			t.Run(tc.name+"/"+model, func(t *testing.T) {
				script := fake.NewScript()
				u := tc.usage
				script.Default = func(fake.Call) fake.Reply {
					return fake.Reply{Kind: fake.ReplyNewAnswer, Content: "ok", Usage: &u}
				}
				c := Config{Env: envOf(fakeEnv(t, script)), Resilience: instantRetries()}
				p, err := c.Open(mustSpec(t, model))
				if err != nil {
					t.Fatal(err)
				}
				_, got, err := p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
				if err != nil {
					t.Fatalf("step: %v", err)
				}
				if got.Input < 0 || got.CachedInput < 0 || got.Output < 0 || got.Reasoning < 0 {
					t.Errorf("the step's usage has a negative count: %+v", got)
				}
				if got.Tokens() < 0 {
					t.Errorf("the step's Tokens() = %d: the sum wrapped", got.Tokens())
				}
				if got.CostUSD != nil && (*got.CostUSD < 0 || math.IsNaN(*got.CostUSD)) {
					t.Errorf("the step's cost is $%v", *got.CostUSD)
				}
			})
		}
	}
}
