package anthropic

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// runningCut is what a cut reply streams before its connection drops: far
// more text than the running usage's few tokens say.
var runningCut = strings.Repeat("The answer is 391, and here is why it is 391. ", 40)

// TestAStreamCutAfterARunningMessageDeltaIsChargedAnEstimate: message_delta
// usage is cumulative and the Messages API may send more than one, so one
// that arrives before a cut (a gateway reporting as it goes) says only what
// had been counted when the stream stopped, not the reply's usage: that is
// final only once message_stop ends the stream. The call is charged as a cut
// one: the reported input stands, the output is at least what streamed, and
// the cost is marked estimated.
func TestAStreamCutAfterARunningMessageDeltaIsChargedAnEstimate(t *testing.T) {
	f := newFake(t)
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyCut, Content: runningCut, RunningUsage: true})
	_, u, err := f.provider(t, testModel).Step(context.Background(), stepRequest())
	if err == nil {
		t.Fatal("a cut stream's step did not fail")
	}
	if want := providers.EstimateTokens(len(runningCut)); u.Input <= 0 || u.Output < want || !u.CostEstimated {
		t.Fatalf("usage = %+v; want the reported input, at least %d output tokens for the %d bytes streamed, marked estimated",
			u, want, len(runningCut))
	}
}

// TestAStreamWithRunningMessageDeltasIsChargedItsFinalReport: the same
// server's stream that ends with message_stop is charged its last
// message_delta exactly, not an estimate.
func TestAStreamWithRunningMessageDeltasIsChargedItsFinalReport(t *testing.T) {
	f := newFake(t)
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyNewAnswer, Content: runningCut, RunningUsage: true,
		Usage: &fake.Usage{Input: 1000, Output: 300}})
	act, u, err := f.provider(t, testModel).Step(context.Background(), stepRequest())
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("Step = %+v, %v", act, err)
	}
	if u.Input != 1000 || u.Output != 300 || u.CostEstimated {
		t.Fatalf("usage = %+v; want the final report, 1000 in and 300 out, not estimated", u)
	}
}
