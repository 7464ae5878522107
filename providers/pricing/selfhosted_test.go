package pricing

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestSelfHostedBackendsCostAKnownZero: a model served by the operator's
// own vllm, sglang, LM Studio or Ollama has no per-token bill, so its cost
// is a known $0 — which a cost budget counts and a report shows as 0 —
// not unknown; a hosted backend the table lacks stays unknown.
func TestSelfHostedBackendsCostAKnownZero(t *testing.T) {
	u := providers.Usage{Input: 1_000_000, Output: 1_000_000}
	for _, b := range []string{"vllm", "sglang", "lmstudio", "ollama"} {
		if c := Cost(b, "Qwen/Qwen3-8B", u); c == nil || *c != 0 {
			t.Errorf("%s: cost %v, want a known 0", b, deref(c))
		}
		_, pu, _ := Priced(fixed{u: u}, b, "llama3.1:8b").Step(context.Background(), providers.Request{})
		if pu.CostUSD == nil || *pu.CostUSD != 0 {
			t.Errorf("%s through Priced: cost %v, want a known 0", b, deref(pu.CostUSD))
		}
	}
	for _, b := range []string{"openrouter", "together", "groq", "cerebras", "fireworks", "deepseek", "azure_openai"} {
		if c := Cost(b, "some-model", u); c != nil {
			t.Errorf("%s bills per token, yet its unlisted model was priced at %g", b, *c)
		}
	}
}
