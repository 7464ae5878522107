package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// TestParallelCallsIntoOneMCPServer: a CLI agent's tool calls reach one
// server at once. Calls made together each get their own answer; a crash
// fails every call in flight on that connection, the server is restarted
// once (not once per failed call), and the restarted server serves the
// calls after it, however the failures of the calls in flight interleave
// with the restart.
func TestParallelCallsIntoOneMCPServer(t *testing.T) {
	needSandbox(t)
	bin := testServer(t)
	for round := range 3 {
		m, err := StartMCP(context.Background(), MCPConfig{
			Servers: map[string]MCPServer{"probe": {Type: MCPStdio, Command: bin}},
			Sandbox: sandbox.Spec{Workspace: t.TempDir()},
		})
		if err != nil {
			t.Fatal(err)
		}
		call := func(name, args string) (string, bool) {
			res, err := m.Call(context.Background(), name, json.RawMessage(args))
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			return res.Content, res.IsError
		}
		together := func(n int, name string, args func(i int) string) []string {
			out := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					content, isErr := call(name, args(i))
					if isErr {
						content = "error: " + content
					}
					out[i] = content
				}()
			}
			wg.Wait()
			return out
		}
		echo := func(i int) string { return fmt.Sprintf(`{"text":"%d"}`, i) }

		for i, got := range together(8, "mcp__probe__echo", echo) {
			if want := fmt.Sprintf("echo: %d", i); got != want {
				t.Fatalf("round %d: call %d of 8 made together got %q, want %q", round, i, got, want)
			}
		}
		boot1, _ := call("mcp__probe__boot", `{}`)

		// Four calls wait on the server; a fifth crashes it under them.
		var waits []string
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			waits = together(4, "mcp__probe__wait", func(int) string { return `{}` })
		}()
		waitInFlight(t, m, 4)
		if out, isErr := call("mcp__probe__crash", `{}`); !isErr || !strings.Contains(out, "stopped during the call") {
			t.Fatalf("round %d: the crash: %q", round, out)
		}
		// The calls after it race the failures of the calls in flight.
		after := together(4, "mcp__probe__echo", echo)
		wg.Wait()
		for _, got := range waits {
			if !strings.HasPrefix(got, "error: MCP server probe stopped during the call to wait") {
				t.Errorf("round %d: a call in flight when the server crashed got %q", round, got)
			}
		}
		for i, got := range after {
			if want := fmt.Sprintf("echo: %d", i); got != want {
				t.Errorf("round %d: call %d after the crash got %q, want %q (one restart serves them all)", round, i, got, want)
			}
		}
		boot2, isErr := call("mcp__probe__boot", `{}`)
		if isErr || boot2 == boot1 {
			t.Errorf("round %d: after the crash boot is %q (before %s): not restarted", round, boot2, boot1)
		}
		if again, _ := call("mcp__probe__echo", `{"text":"again"}`); again != "echo: again" {
			t.Errorf("round %d: the restarted server was marked broken by a failure of the old one: %q", round, again)
		}
		waitRunning(t, bin, 1)
		m.Close()
		waitRunning(t, bin, 0)
	}
}

// waitInFlight waits until the server has said n times that a wait call
// reached it.
func waitInFlight(t *testing.T, m *MCP, n int) {
	t.Helper()
	s := m.servers[0]
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(s.stderr.String(), "mcpserver: waiting") < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d wait calls reached the server, want %d", strings.Count(s.stderr.String(), "mcpserver: waiting"), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
