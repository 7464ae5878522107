package benchmark

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestWavesCountsRoundsNotTheSpreadOfALoadedStore: three rounds of four
// agents, each round's steps starting up to 0.7 s apart (a store slow to
// land them), together, or a moment before the step they follow ended,
// count three rounds every way; short steps that overlap are one round; an agent that sits
// a round out, and a round that only one agent's steps chain through, count
// as the rounds they are.
func TestWavesCountsRoundsNotTheSpreadOfALoadedStore(t *testing.T) {
	const latency = time.Second
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	// step is an entry that began at start seconds and took a latency;
	// short, one that took a tenth of one (an error, say).
	step := func(start float64) coordination.Entry {
		return coordination.Entry{Time: t0.Add(time.Duration(start*float64(time.Second)) + latency), DurationSeconds: latency.Seconds()}
	}
	short := func(start float64) coordination.Entry {
		return coordination.Entry{Time: t0.Add(time.Duration(start*float64(time.Second)) + latency/10), DurationSeconds: latency.Seconds() / 10}
	}
	for _, tc := range []struct {
		name   string
		starts map[string][]float64
		short  map[string][]float64
		want   int
	}{
		// Short steps that overlap are one round, not a chain: a quarter of
		// a latency of slack would have linked them.
		{"four short steps at once", nil, map[string][]float64{"a": {0}, "b": {0.01}, "c": {0.02}, "d": {0.03}}, 1},
		{"a short step, then a step", map[string][]float64{"b": {0.1}}, map[string][]float64{"a": {0}}, 2},
		{"together", map[string][]float64{"a": {0, 1, 2}, "b": {0, 1, 2}, "c": {0, 1, 2}, "d": {0, 1, 2}}, nil, 3},
		// As the memory store's entries read: a step's start, its entry's
		// time less its duration, a fraction of a millisecond before the
		// end of the step it follows.
		{"the next step a moment before the last one's end", map[string][]float64{
			"a": {0, 0.9998, 1.9997}, "b": {0, 0.9999, 1.9998}}, nil, 3},
		{"spread over 0.7 s each round", map[string][]float64{
			"a": {0, 1.01, 2.02}, "b": {0.2, 1.3, 2.5}, "c": {0.45, 1.5, 2.71}, "d": {0.7, 1.71, 2.72}}, nil, 3},
		{"an agent sits a round out", map[string][]float64{"a": {0, 1, 2}, "b": {0, 2}}, nil, 3},
		{"one agent's chain", map[string][]float64{"a": {0, 1, 2, 3}, "b": {0}}, nil, 4},
		{"one step", map[string][]float64{"a": {0}}, nil, 1},
		{"no steps", map[string][]float64{}, nil, 0},
	} {
		l := &coordination.Ledger{Agents: map[string][]coordination.Entry{}}
		for agent, starts := range tc.starts {
			for _, s := range starts {
				l.Agents[agent] = append(l.Agents[agent], step(s))
			}
		}
		for agent, starts := range tc.short {
			for _, s := range starts {
				l.Agents[agent] = append(l.Agents[agent], short(s))
			}
		}
		if got := Waves(l, latency); got != tc.want {
			t.Errorf("%s: %d waves, want %d", tc.name, got, tc.want)
		}
	}
}
