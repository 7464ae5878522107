package providers_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestUnreportedKeepsWhatWasReportedAndEstimatesTheRest(t *testing.T) {
	cost := 0.5
	// Anthropic's message_start counted the input; the output never came.
	u := providers.Unreported(providers.Usage{Input: 1000, CachedInput: 800, Output: 1, CostUSD: &cost}, 50, 4000)
	if u.Input != 1000 || u.CachedInput != 800 || u.Output != 1000 || u.CostUSD != nil || !u.CostEstimated {
		t.Errorf("with the input reported: %+v; want input 1000 (800 cached) kept, 1000 output estimated, no cost, marked", u)
	}
	// Nothing reported: the input is the estimate.
	if u := providers.Unreported(providers.Usage{}, 50, 0); u.Input != 50 || u.Output != 0 || !u.CostEstimated {
		t.Errorf("with nothing reported: %+v; want input 50, output 0, marked", u)
	}
	// More output reported than streamed (hidden reasoning) stands.
	if u := providers.Unreported(providers.Usage{Input: 10, Output: 900, Reasoning: 800}, 50, 40); u.Output != 900 {
		t.Errorf("reported output 900 became %d", u.Output)
	}
}

func TestEstimateInputCountsEveryPartOfTheRequest(t *testing.T) {
	req := providers.Request{System: strings.Repeat("s", 400), Prompt: strings.Repeat("p", 400),
		Tools:   []providers.Tool{{Name: "t", Description: strings.Repeat("d", 399), Schema: []byte("{}")}},
		History: []providers.Turn{{Reply: providers.Action{Text: strings.Repeat("r", 400)}, Problem: strings.Repeat("q", 400)}},
		Images:  []providers.Image{{Name: "a.png", MIME: providers.MIMEPNG, Data: make([]byte, 1<<20)}}}
	past := []providers.Exchange{{Reply: providers.Action{Calls: []providers.ToolCall{{Name: "x", Args: []byte(strings.Repeat("a", 399))}}},
		Results: []providers.ToolResult{{Content: strings.Repeat("c", 400)}}}}
	// 7 × 400 bytes of text (the tools' 400 with its name and schema: 402),
	// then one image, whatever its size.
	if got, want := providers.EstimateInput(req, past), int64(2802+3)/4+providers.EstimateImageTokens; got != want {
		t.Errorf("EstimateInput = %d, want %d", got, want)
	}
}
