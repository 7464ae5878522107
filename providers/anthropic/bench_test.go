package anthropic

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// BenchmarkStepOverhead measures what the adapter adds to one step: each
// iteration runs a bare SDK streaming call (params built once, events read
// and dropped) and a full Step (params, stream, accumulation, usage) against
// the same fake, alternating which goes first, and reports the ratio of
// their median times (target ≤ 1.05).
func BenchmarkStepOverhead(b *testing.B) {
	f := newFake(b)
	f.script.Default = func(fake.Call) fake.Reply {
		return fake.Reply{Kind: fake.ReplyVote, Agent: "agent1", Reason: "391 is 17 × 23; the other answer is off by ten.",
			Usage: &fake.Usage{Input: 2000, CachedInput: 1500, Output: 40}}
	}
	p := f.provider(b, testModel)
	req := stepRequest()
	params, err := p.params(req, nil)
	if err != nil {
		b.Fatal(err)
	}
	bare := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(f.URL), option.WithAPIKey(plantedKey),
		option.WithMaxRetries(0), option.WithHTTPClient(f.Client()))
	ctx := context.Background()
	sdkCall := func() {
		s := bare.Messages.NewStreaming(ctx, params)
		for s.Next() {
			_ = s.Current()
		}
		if err := s.Err(); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	stepCall := func() {
		act, _, err := p.Step(ctx, req)
		if err != nil || len(act.Calls) != 1 {
			b.Fatalf("step: %v %+v", err, act)
		}
	}
	for range 20 { // warm the connection pool and both code paths
		sdkCall()
		stepCall()
	}
	sdkTimes := make([]time.Duration, 0, b.N)
	stepTimes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			sdkTimes = append(sdkTimes, timed(sdkCall))
			stepTimes = append(stepTimes, timed(stepCall))
		} else {
			stepTimes = append(stepTimes, timed(stepCall))
			sdkTimes = append(sdkTimes, timed(sdkCall))
		}
	}
	b.StopTimer()
	// Medians: a loaded machine adds stalls of milliseconds to a few calls
	// of either kind, which would swamp a difference of microseconds.
	sdkMedian, stepMedian := median(sdkTimes), median(stepTimes)
	b.ReportMetric(float64(sdkMedian.Nanoseconds()), "sdk-ns/step")
	b.ReportMetric(float64(stepMedian.Nanoseconds()), "adapter-ns/step")
	b.ReportMetric(float64(stepMedian)/float64(sdkMedian), "ratio")
}

func timed(f func()) time.Duration {
	t := time.Now()
	f()
	return time.Since(t)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkParams is the adapter's own work before the call: building the
// request for a step with history.
func BenchmarkParams(b *testing.B) {
	p := &Provider{model: testModel}
	req := stepRequest()
	req.History = []providers.Turn{{Reply: providers.Action{Calls: []providers.ToolCall{providers.VoteCall("agent9", "x")}}, Problem: "agent9 has no answer."}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.params(req, nil); err != nil {
			b.Fatal(err)
		}
	}
}
