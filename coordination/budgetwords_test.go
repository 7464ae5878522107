package coordination_test

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestABudgetRefusalSaysItsReasonOnce: the refusal read "invalid input: the
// budget cannot pay for one round: a cost budget of $0.0500 cannot pay for
// one round of these 3 agents: …", the reason twice in one sentence.
func TestABudgetRefusalSaysItsReasonOnce(t *testing.T) {
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		return coordtest.Act(providers.NewAnswerCall("x")), providers.Free(), nil
	})
	m := "sim:price_in=10:price_out=40"
	h := coordtest.New(t, map[string]providers.Provider{m: p})
	budget := 0.05
	spec := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{m, m, m}}
	spec.Rules.CostBudgetUSD = &budget
	_, err := h.Service.Create(context.Background(), spec)
	if err == nil {
		t.Fatal("a budget that cannot pay for one round was accepted")
	}
	if msg := err.Error(); strings.Count(msg, "cannot pay for one round") != 1 || !strings.HasPrefix(msg, "invalid input: a cost budget of $0.0500") {
		t.Errorf("refusal: %s", msg)
	}
}
