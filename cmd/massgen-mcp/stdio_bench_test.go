package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// stdioClient starts the real binary as an MCP server over stdio.
func stdioClient(b *testing.B) *client.Client {
	c, err := client.NewStdioMCPClient(binary(b), nil, "serve", "--state-dir", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "0"}
	if _, err := c.Initialize(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	return c
}

func call(b *testing.B, c *client.Client, name, args string) *mcpgo.CallToolResult {
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		b.Fatal(err)
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, m
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	if res.IsError {
		b.Fatalf("%s: %+v", name, res.Content)
	}
	return res
}

func median(b *testing.B, times []time.Duration) {
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkStdioTeamStatus is a team_status round trip to the real binary
// over stdio (file store, as the binary runs).
func BenchmarkStdioTeamStatus(b *testing.B) {
	c := stdioClient(b)
	call(b, c, "start_team", `{"task":"What is 17 * 23?","models":["sim/strong","sim/strong","sim"],"session_id":"bench"}`)
	for _, a := range []string{"agent_a", "agent_b", "agent_c"} {
		call(b, c, "step", fmt.Sprintf(`{"session_id":"bench","agent_id":%q}`, a))
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		call(b, c, "team_status", `{"session_id":"bench"}`)
		times = append(times, time.Since(start))
	}
	median(b, times)
}

// BenchmarkStdioHostStepSubmit is a host's submitted step over stdio on the
// file store: check the issued view, write the entry, decide.
func BenchmarkStdioHostStepSubmit(b *testing.B) {
	c := stdioClient(b)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := fmt.Sprintf("bench_%d", i)
		call(b, c, "start_team", fmt.Sprintf(`{"task":"What is 17 * 23?","models":["host","host"],"session_id":%q}`, id))
		res := call(b, c, "step", fmt.Sprintf(`{"session_id":%q,"agent_id":"agent_a"}`, id))
		var view struct {
			SeenSteps map[string]int `json:"seen_steps"`
		}
		body, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(body, &view)
		submit, _ := json.Marshal(map[string]any{"session_id": id, "agent_id": "agent_a", "action": "new_answer", "content": "17 * 23 = 391", "seen_steps": view.SeenSteps})
		b.StartTimer()
		start := time.Now()
		call(b, c, "step", string(submit))
		times = append(times, time.Since(start))
	}
	median(b, times)
}
