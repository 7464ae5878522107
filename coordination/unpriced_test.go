package coordination_test

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
)

// TestSelfHostedAgentsAreEstimatedAtAKnownZero: an agent on the
// operator's own vllm, sglang, LM Studio or Ollama has no per-token bill:
// the estimate prices it at $0, so it is not among the unpriced agents a
// cost budget cannot bound.
func TestSelfHostedAgentsAreEstimatedAtAKnownZero(t *testing.T) {
	h := coordtest.New(t, nil)
	budget := 1.0
	spec := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"ollama/llama3.1:8b", "vllm/Qwen/Qwen3-8B", "sglang/m", "lmstudio/qwen3-8b"},
		Rules: coordination.Rules{CostBudgetUSD: &budget}}
	est, err := h.Service.Estimate(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Unpriced) != 0 || est.RoundCostUSD != 0 || est.Problem != "" {
		t.Fatalf("estimate: %s", coordtest.JSON(est))
	}
	for _, a := range est.Agents {
		if a.CostUSD == nil || *a.CostUSD != 0 || a.SessionCostUSD == nil || *a.SessionCostUSD != 0 {
			t.Errorf("%s (%s): cost %s, want a known $0", a.AgentID, a.Model, coordtest.JSON(a))
		}
	}
}
