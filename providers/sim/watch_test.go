package sim_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

type recorder struct {
	mu    sync.Mutex
	times []time.Time
	text  strings.Builder
}

func (r *recorder) Text(d string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = append(r.times, time.Now())
	r.text.WriteString(d)
}
func (r *recorder) Retry(time.Duration, error) {}

func TestSimStreamsItsAnswerOverItsLatency(t *testing.T) {
	sp, err := providers.ParseSpec("sim/strong:latency=200ms")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	req := providers.Request{Task: "What is 17 * 23?", Tools: []providers.Tool{{Name: providers.ToolNewAnswer}}, AgentID: "agent_a", Self: "agent1", StepNumber: 1}
	rec := &recorder{}
	req.Watch = rec
	start := time.Now()
	act, _, err := p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 200*time.Millisecond {
		t.Fatalf("streaming must not shorten the latency")
	}
	if len(rec.times) < 2 || rec.times[len(rec.times)-1].Sub(rec.times[0]) < 30*time.Millisecond {
		t.Fatalf("want several pieces spread over the latency, got %d", len(rec.times))
	}
	want, _ := act.Calls[0].Args.MarshalJSON()
	if !strings.Contains(string(want), "391") || !strings.Contains(rec.text.String(), "391") {
		t.Fatalf("streamed %q for the answer %s", rec.text.String(), want)
	}
}
