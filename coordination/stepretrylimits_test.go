package coordination_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// refusedAttempts is a model whose every attempt spends as told, makes the
// tool calls told (recorded, as a tool loop or a CLI records them) and
// replies without a workflow call, so the step tries again; it keeps each
// attempt's request.
type refusedAttempts struct {
	mu     sync.Mutex
	calls  []int   // tool calls each attempt makes
	tokens []int64 // tokens each attempt spends
	reqs   []providers.Request
}

func (p *refusedAttempts) Step(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	p.mu.Lock()
	i := len(p.reqs)
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	for range p.calls[i] {
		req.RecordTool(providers.ToolRecord{Kind: "tool", Name: "read_file"})
	}
	req.RecordTool(providers.ToolRecord{Kind: "web_search", Name: "web_search"}) // not a tool call the limits count
	return providers.Action{Text: "thinking aloud"}, providers.Usage{Input: p.tokens[i] - 10, Output: 10}, nil
}

// TestAStepsRetriesShareItsToolCallsAndTokenBudget: a step's attempts (up
// to three, each a new Provider.Step whose loop counts from nothing) share
// one count of tool calls and one token budget: a retry is given what the
// attempts before it left, and once they left nothing no attempt is made,
// the step failing by the limit spent. Before, each attempt got the full
// max_tool_calls_per_step and the full token budget fixed at the step's
// start: three times either, a step.
func TestAStepsRetriesShareItsToolCallsAndTokenBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rules     coordination.Rules
		calls     []int
		tokens    []int64
		wantCalls []int   // MaxToolCalls each attempt was given
		wantToks  []int64 // TokenBudget each attempt was given
		class     providers.Class
	}{
		{"tool calls", coordination.Rules{MaxToolCallsPerStep: 10}, []int{6, 4, 0}, []int64{100, 100, 100},
			[]int{10, 4}, []int64{0, 0}, providers.ClassToolCalls},
		{"tokens", coordination.Rules{TokenBudget: new(int64(100_000))}, []int{1, 1, 1}, []int64{60_000, 40_000, 100},
			[]int{providers.DefaultMaxToolCalls, providers.DefaultMaxToolCalls - 1}, []int64{100_000, 40_000}, providers.ClassBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			models, _, provs := coordtest.Team(t, 2)
			p := &refusedAttempts{calls: tc.calls, tokens: tc.tokens}
			provs[models[0]] = p
			h := coordtest.New(t, provs)
			s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep, Rules: tc.rules})
			res, err := h.Service.Step(context.Background(), coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
			if err != nil {
				t.Fatal(err)
			}
			var gotCalls []int
			var gotToks []int64
			for _, r := range p.reqs {
				gotCalls, gotToks = append(gotCalls, r.MaxToolCalls), append(gotToks, r.TokenBudget)
			}
			if !slices.Equal(gotCalls, tc.wantCalls) || !slices.Equal(gotToks, tc.wantToks) {
				t.Errorf("the attempts were given tool calls %v and token budgets %v; want %v and %v (what the attempts before left, and no attempt once nothing was)",
					gotCalls, gotToks, tc.wantCalls, tc.wantToks)
			}
			if res.ErrorClass != string(tc.class) {
				t.Errorf("the step landed as %q (%s); want an error of class %s", res.ErrorClass, res.Message, tc.class)
			}
			t.Logf("the step: %s", res.Message)
		})
	}
}
