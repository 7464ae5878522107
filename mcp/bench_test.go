package mcp

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// Round trips through the MCP layer (JSON-RPC encoding, argument checking,
// the coordination call, output-schema validation, result encoding) with
// the in-process client. Each benchmark reports its median, the number the
// design targets: team_status < 1 ms on the memory store, a host step
// submission < 10 ms on the file store.

func BenchmarkTeamStatusMemoryStore(b *testing.B) {
	s := benchServer(b, memstore.New())
	c := inProcess(b, s, false)
	// A session with some history: every agent has answered.
	var started startTeamResult
	decode(b, callTool(b, c, "start_team", `{"task":"What is 17 * 23?","models":["sim/strong","sim/strong","sim"],"session_id":"bench"}`), &started)
	for _, a := range started.NextAgents {
		callTool(b, c, "step", fmt.Sprintf(`{"session_id":"bench","agent_id":%q}`, a))
	}
	args := `{"session_id":"bench"}`
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res := callTool(b, c, "team_status", args)
		times = append(times, time.Since(start))
		if res.IsError {
			b.Fatal(text(res))
		}
	}
	reportMedian(b, times)
}

func BenchmarkHostStepSubmitFileStore(b *testing.B) {
	s := benchServer(b, filestore.New(b.TempDir()))
	c := inProcess(b, s, false)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := fmt.Sprintf("bench_%d", i)
		callTool(b, c, "start_team", fmt.Sprintf(`{"task":"What is 17 * 23?","models":["host","host"],"session_id":%q}`, id))
		var view coordination.StepResult
		decode(b, callTool(b, c, "step", fmt.Sprintf(`{"session_id":%q,"agent_id":"agent_a"}`, id)), &view)
		submit := mustJSON(map[string]any{"session_id": id, "agent_id": "agent_a", "action": "new_answer", "content": "17 * 23 = 391", "seen_steps": view.SeenSteps})
		b.StartTimer()
		start := time.Now()
		res := callTool(b, c, "step", submit)
		times = append(times, time.Since(start))
		if res.IsError {
			b.Fatal(text(res))
		}
	}
	reportMedian(b, times)
}

// benchServer is configured as the binary is: no output validation.
func benchServer(b *testing.B, store coordination.Store) *Server {
	return New(coordination.NewService(store, coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()}), Options{})
}

func reportMedian(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}
