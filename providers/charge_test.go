package providers_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestACutStreamKeepsWhatWasReportedAndEstimatesTheRest(t *testing.T) {
	cost := 0.5
	// Anthropic's message_start counted the input; the output never came.
	u := providers.Charge(providers.Usage{Input: 1000, CachedInput: 800, Output: 1, CostUSD: &cost}, false, 50, 4000)
	if u.Input != 1000 || u.CachedInput != 800 || u.Output != 1000 || u.CostUSD != nil || !u.CostEstimated {
		t.Errorf("with the input reported: %+v; want input 1000 (800 cached) kept, 1000 output estimated, no cost, marked", u)
	}
	// Nothing reported: the input is the estimate.
	if u := providers.Charge(providers.Usage{}, false, 50, 0); u.Input != 50 || u.Output != 0 || !u.CostEstimated {
		t.Errorf("with nothing reported: %+v; want input 50, output 0, marked", u)
	}
	// More output reported than streamed (hidden reasoning) stands.
	if u := providers.Charge(providers.Usage{Input: 10, Output: 900, Reasoning: 800}, false, 50, 40); u.Output != 900 {
		t.Errorf("reported output 900 became %d", u.Output)
	}
}

// TestACompletedReplyIsChargedItsReportAndZerosAreEstimated pins the rule
// for a reply whose usage report arrived: what it counted stands, and only a
// count left at zero where something was sent or returned is estimated.
func TestACompletedReplyIsChargedItsReportAndZerosAreEstimated(t *testing.T) {
	cost := 0.5
	for _, tc := range []struct {
		name             string
		reported         providers.Usage
		input            int64
		streamed         int
		wantIn, wantOut  int64
		wantEstimated    bool
		wantReportedCost bool
	}{
		{"an exact report stands, below the estimate too", providers.Usage{Input: 10, Output: 1, CostUSD: &cost}, 500, 4000, 10, 1, false, true},
		{"zeros with output returned", providers.Usage{}, 500, 4000, 500, 1000, true, false},
		{"zero input, output counted", providers.Usage{Output: 7}, 500, 4000, 500, 7, true, false},
		{"input counted, zero output", providers.Usage{Input: 9, CachedInput: 4}, 500, 40, 9, 10, true, false},
		{"an empty reply keeps zero output", providers.Usage{Input: 9, CostUSD: &cost}, 500, 0, 9, 0, false, true},
		{"zeros for an empty reply: the input is estimated", providers.Usage{}, 500, 0, 500, 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := providers.Charge(tc.reported, true, tc.input, tc.streamed)
			if u.Input != tc.wantIn || u.Output != tc.wantOut || u.CostEstimated != tc.wantEstimated ||
				(u.CostUSD != nil) != tc.wantReportedCost || u.CachedInput != tc.reported.CachedInput {
				t.Errorf("Charge(%+v) = %+v; want input %d, output %d, estimated %v, reported cost kept %v",
					tc.reported, u, tc.wantIn, tc.wantOut, tc.wantEstimated, tc.wantReportedCost)
			}
		})
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
