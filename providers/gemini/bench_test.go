package gemini

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// BenchmarkStepOverhead measures what the adapter adds to one step over the
// bare SDK call, both against the same fake on loopback: the bare call sends
// the same prepared request and only drains the stream, the adapter also
// builds the request, accumulates the parts, normalises usage and keeps the
// raw parts for replay. The two run interleaved (order alternating) so drift
// hits both alike; "ratio" is adapter time over bare time (target ≤ 1.05).
func BenchmarkStepOverhead(b *testing.B) {
	script := fake.NewScript()
	script.Default = func(fake.Call) fake.Reply {
		return fake.Reply{Kind: fake.ReplyNewAnswer, Content: "Fake answer.\nAnswer: 42"}
	}
	srv := httptest.NewServer(fake.NewGemini(script))
	defer srv.Close()
	ep := providers.Endpoint{Backend: "gemini", Model: flash, BaseURL: srv.URL, APIKey: plantedKey, HTTPClient: srv.Client()}
	p, err := New(ep)
	if err != nil {
		b.Fatal(err)
	}
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: ep.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: srv.Client(),
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	if err != nil {
		b.Fatal(err)
	}
	temp := 0.7
	req := stepRequest(newAnswerTool(), voteTool("agent1", "agent2"))
	req.Temperature, req.MaxOutputTokens, req.ReasoningEffort = &temp, 4096, "low"
	contents := contentsFor(flash, req, nil)
	cfg, err := configFor(flash, req, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	adapter := func() {
		act, _, err := p.Step(ctx, req)
		if err != nil || len(act.Calls) != 1 {
			b.Fatalf("adapter step: %v %+v", err, act)
		}
	}
	bare := func() {
		n := 0
		for chunk, err := range client.Models.GenerateContentStream(ctx, flash, contents, cfg) {
			if err != nil {
				b.Fatalf("bare SDK call: %v", err)
			}
			if len(chunk.FunctionCalls()) > 0 {
				n++
			}
		}
		if n != 1 {
			b.Fatal("bare SDK call: no function call")
		}
	}
	adapter() // warm both connections
	bare()

	tAdapter := make([]time.Duration, 0, b.N)
	tBare := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		first, second := adapter, bare
		if i%2 == 1 {
			first, second = bare, adapter
		}
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		t2 := time.Now()
		if i%2 == 0 {
			tAdapter, tBare = append(tAdapter, t1.Sub(t0)), append(tBare, t2.Sub(t1))
		} else {
			tBare, tAdapter = append(tBare, t1.Sub(t0)), append(tAdapter, t2.Sub(t1))
		}
	}
	b.StopTimer()
	// Medians: a loopback round trip has a long tail (scheduler, GC) that
	// would otherwise swamp a difference of a few microseconds.
	a, s := median(tAdapter), median(tBare)
	b.ReportMetric(float64(a.Nanoseconds()), "adapter-ns/step")
	b.ReportMetric(float64(s.Nanoseconds()), "sdk-ns/step")
	b.ReportMetric(float64(a)/float64(s), "ratio")
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
