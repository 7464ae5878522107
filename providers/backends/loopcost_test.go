package backends

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// TestAToolLoopIsPricedTurnByTurn runs a step of two model turns (a
// read_file call, then the answer), each with 150k input tokens, on models
// whose price doubles for a request above 200k (Gemini) or 272k (GPT-5.4)
// input tokens. Long-context pricing applies per request: neither turn is
// one, so the step costs the two turns' base prices. Pricing the loop's
// summed usage (300k input) as if it were one request bills the whole step
// at the long-context rates — about twice the real cost, which stops a
// session's cost_budget_usd early and misstates every report.
func TestAToolLoopIsPricedTurnByTurn(t *testing.T) {
	turnUsage := fake.Usage{Input: 150_000, Output: 1_000}
	for _, tc := range []struct{ spec, backend, model string }{
		{"openai/gpt-5.4", "openai", "gpt-5.4"},
		{"gemini/gemini-3.1-pro-preview", "gemini", "gemini-3.1-pro-preview"},
		{"claude/claude-sonnet-4-5", "claude", "claude-sonnet-4-5"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			script := fake.NewScript()
			u := turnUsage
			script.Add(tc.model,
				fake.Reply{Kind: fake.ReplyToolCall, Tool: "read_file", Input: json.RawMessage(`{"path":"a.txt"}`), Usage: &u},
				fake.Reply{Kind: fake.ReplyNewAnswer, Content: "ok", Usage: &u})
			c := Config{Env: envOf(fakeEnv(t, script)), Resilience: instantRetries()}
			p, err := c.Open(mustSpec(t, tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
			req := providers.Request{System: "s", Prompt: "u", Toolbox: box, Tools: []providers.Tool{{Name: providers.ToolNewAnswer,
				Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)}}}
			_, got, err := p.Step(context.Background(), req)
			if err != nil {
				t.Fatalf("step: %v", err)
			}
			if n := len(box.Calls()); n != 1 {
				t.Fatalf("the toolbox ran %d calls, want 1", n)
			}
			one := pricing.Cost(tc.backend, tc.model, providers.Usage{Input: turnUsage.Input, Output: turnUsage.Output})
			if one == nil || got.CostUSD == nil {
				t.Fatalf("unpriced: turn %v, step %v", one, got.CostUSD)
			}
			if want := 2 * *one; math.Abs(*got.CostUSD-want) > 1e-9 {
				t.Errorf("a step of two 150k-token turns cost $%.4f, want $%.4f (each turn at its own request's price); usage %+v", *got.CostUSD, want, got)
			}
		})
	}
}
