package backends

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// cutContent is what a cut reply streams before its connection drops: long
// enough that its output is worth counting.
var cutContent = strings.Repeat("The answer is 42, and here is why it is 42. ", 40)

// TestAStreamCutBeforeItsUsageIsChargedAndTheBudgetBinds plays, through
// every API family's real SDK, a reply whose stream ends before the server
// reports its usage: the connection drops after some text (ReplyCut), or the
// server sends an error event after it (ReplyStreamError). The server ran the
// model on the prompt and streamed the text, so the call was paid for; were
// it counted as no spend, a cost budget would never bind against a server
// that never gets to its usage report, and the resilience layer would retry
// it again and again. The step must be charged an estimate (input from the
// request, output from what streamed), marked cost_estimated, and a session
// whose budget that spends must not retry it.
func TestAStreamCutBeforeItsUsageIsChargedAndTheBudgetBinds(t *testing.T) {
	for _, kind := range []string{fake.ReplyCut, fake.ReplyStreamError} {
		for _, model := range []string{"openai/gpt-5-mini", "grok/grok-4", "claude/claude-haiku-4-5", "gemini/gemini-2.5-flash"} {
			t.Run(kind+"/"+model, func(t *testing.T) {
				script := fake.NewScript()
				script.Default = func(fake.Call) fake.Reply {
					return fake.Reply{Kind: kind, Content: cutContent, Status: 500, ErrorType: "api_error", ErrorMessage: "stream broke"}
				}
				c := Config{Env: envOf(fakeEnv(t, script)), Resilience: instantRetries()}
				p, err := c.Open(mustSpec(t, model))
				if err != nil {
					t.Fatal(err)
				}
				var heard []providers.Usage
				req := providers.Request{System: "You are one agent of a team.", Prompt: strings.Repeat("Task: what is 6 x 7? ", 50),
					Spend: providers.SpendFunc(func(u providers.Usage) string {
						heard = append(heard, u)
						if u.CostUSD != nil && *u.CostUSD > 0 {
							return "the session's cost_budget_usd of $0.000001 is spent"
						}
						return ""
					})}
				_, u, err := p.Step(context.Background(), req)
				if err == nil {
					t.Fatal("the step did not fail")
				}
				t.Logf("usage %+v cost %v; err: %v", u, deref(u.CostUSD), err)
				if u.Input <= 0 || u.CostUSD == nil || *u.CostUSD <= 0 {
					t.Errorf("the cut call was charged input %d, cost $%v; want an estimate above zero", u.Input, deref(u.CostUSD))
				}
				if kind == fake.ReplyCut && u.Output < int64(len(cutContent)/4) {
					t.Errorf("the cut call was charged %d output tokens for %d bytes of streamed text", u.Output, len(cutContent))
				}
				if !u.CostEstimated {
					t.Errorf("an estimated charge is not marked cost_estimated: %+v", u)
				}
				if n := len(script.Calls()); n != 1 || providers.ClassOf(err) != providers.ClassBudget {
					t.Errorf("%d calls, err class %s (%v); want the budget to stop the retry after the first call", n, providers.ClassOf(err), err)
				}
				if len(heard) == 0 {
					t.Errorf("the session's budget never heard of the spend")
				}
			})
		}
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
