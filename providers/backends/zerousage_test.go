package backends

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// zeroUsageModels are one model of every API family: Responses, Chat
// Completions, Anthropic Messages and Gemini.
var zeroUsageModels = []string{"openai/gpt-5-mini", "grok/grok-4", "claude/claude-haiku-4-5", "gemini/gemini-2.5-flash"}

// TestACompletedReplyThatReportsZeroUsageIsChargedAnEstimate plays, through
// every API family's real SDK, a reply that completes normally but reports
// zero input and zero output tokens, as OpenAI-compatible local servers
// often do. The server ran the model on the prompt and returned the answer;
// counted as the zeros it reported, no token or cost budget would ever bind
// against it. The step is charged an estimate instead (input from the
// request, output at least what it returned), marked cost_estimated.
func TestACompletedReplyThatReportsZeroUsageIsChargedAnEstimate(t *testing.T) {
	answer := strings.Repeat("The answer is 42, and here is why it is 42. ", 40)
	for _, model := range zeroUsageModels {
		t.Run(model, func(t *testing.T) {
			script := fake.NewScript()
			script.Default = func(fake.Call) fake.Reply {
				return fake.Reply{Kind: fake.ReplyNewAnswer, Content: answer, Usage: &fake.Usage{Zero: true}}
			}
			c := Config{Env: envOf(fakeEnv(t, script)), Resilience: instantRetries()}
			p, err := c.Open(mustSpec(t, model))
			if err != nil {
				t.Fatal(err)
			}
			req := providers.Request{System: "You are one agent of a team.", Prompt: strings.Repeat("Task: what is 6 x 7? ", 50),
				Tools: []providers.Tool{newAnswerTool}}
			act, u, err := p.Step(context.Background(), req)
			if err != nil || len(act.Calls) != 1 {
				t.Fatalf("Step = %+v, %v", act, err)
			}
			if in := int64(len(req.Prompt) / 4); u.Input < in {
				t.Errorf("input %d tokens for a prompt of %d bytes; want at least %d", u.Input, len(req.Prompt), in)
			}
			if out := int64(len(answer) / 4); u.Output < out {
				t.Errorf("output %d tokens for an answer of %d bytes; want at least %d", u.Output, len(answer), out)
			}
			if u.CostUSD == nil || *u.CostUSD <= 0 || !u.CostEstimated {
				t.Errorf("cost $%v, estimated %v; want a priced estimate, marked cost_estimated", deref(u.CostUSD), u.CostEstimated)
			}
		})
	}
}

// TestAToolLoopOfZeroUsageRepliesMeetsTheBudget: a tool loop whose replies
// all report zero usage ran up nothing, so a session's budget never stopped
// it. Charged an estimate, its first turn's spend reaches the budget, which
// stops the step before the tool runs.
func TestAToolLoopOfZeroUsageRepliesMeetsTheBudget(t *testing.T) {
	for _, model := range zeroUsageModels {
		t.Run(model, func(t *testing.T) {
			script := fake.NewScript()
			script.Default = func(fake.Call) fake.Reply {
				return fake.Reply{Kind: fake.ReplyToolCall, Tool: "read_file", Input: json.RawMessage(`{"path":"a.txt"}`),
					Usage: &fake.Usage{Zero: true}}
			}
			c := Config{Env: envOf(fakeEnv(t, script)), Resilience: instantRetries()}
			p, err := c.Open(mustSpec(t, model))
			if err != nil {
				t.Fatal(err)
			}
			box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
			req := providers.Request{System: "s", Prompt: strings.Repeat("Task: what is 6 x 7? ", 50), Toolbox: box,
				Tools: []providers.Tool{newAnswerTool},
				Spend: providers.SpendFunc(func(u providers.Usage) string {
					if u.CostUSD != nil && *u.CostUSD > 0 {
						return "the session's cost_budget_usd of $0.000001 is spent"
					}
					return ""
				})}
			_, u, err := p.Step(context.Background(), req)
			if providers.ClassOf(err) != providers.ClassBudget {
				t.Errorf("err %v (class %s); want the budget to stop the loop", err, providers.ClassOf(err))
			}
			if n, ran := len(script.Calls()), len(box.Calls()); n != 1 || ran != 0 {
				t.Errorf("%d model calls, %d tool calls; want the budget to stop the loop after the first turn", n, ran)
			}
			if u.Input <= 0 || !u.CostEstimated {
				t.Errorf("usage %+v; want an estimate, marked cost_estimated", u)
			}
		})
	}
}

var newAnswerTool = providers.Tool{Name: providers.ToolNewAnswer,
	Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)}
