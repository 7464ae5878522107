package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// startRude starts the test server with its misbehaving tools as "rude".
func startRude(t *testing.T, callTimeout time.Duration) (*MCP, string) {
	t.Helper()
	needSandbox(t)
	bin := testServer(t)
	m, err := StartMCP(context.Background(), MCPConfig{
		Servers:     map[string]MCPServer{"rude": {Type: MCPStdio, Command: bin, Args: []string{"-rude"}}},
		Sandbox:     sandbox.Spec{Workspace: t.TempDir()},
		CallTimeout: callTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); waitRunning(t, bin, 0) })
	waitRunning(t, bin, 1)
	return m, bin
}

// TestStdioMCPServerThatSendsAnOversizedMessageIsStopped: one line on a
// stdio server's stdout is one JSON-RPC message, and a server that writes
// one far larger than any tool result (a bug, or a hostile server) must not
// have it read whole into this process's memory. Past the limit the
// message is refused, the server is stopped, and its calls (the one in
// flight and every later one) fail at once naming the server and the
// limit. A large message within the limit is served.
func TestStdioMCPServerThatSendsAnOversizedMessageIsStopped(t *testing.T) {
	m, bin := startRude(t, 8*time.Second)
	call := func(name, args string) (string, bool, time.Duration) {
		t.Helper()
		start := time.Now()
		res, err := m.Call(context.Background(), name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content, res.IsError, time.Since(start)
	}
	big := strings.Repeat("y", 1<<20)
	if out, isErr, _ := call("mcp__rude__echo", fmt.Sprintf(`{"text":%q}`, big)); isErr || !strings.HasPrefix(out, "echo: yyy") {
		t.Fatalf("a 1 MiB answer: error %v, %.80q", isErr, out)
	}

	out, isErr, took := call("mcp__rude__flood", `{"mib":24}`)
	if !isErr || !strings.Contains(out, "MCP server rude") || !strings.Contains(out, "8 MiB") || took > 6*time.Second {
		t.Errorf("the call whose answer is a 24 MiB line took %v: error %v, %.300q", took, isErr, out)
	}
	if tail := m.servers[0].stderr.String(); strings.Contains(tail, "flood all written") {
		t.Errorf("the whole 24 MiB line was read; the server's stderr: %s", tail)
	}
	out, isErr, took = call("mcp__rude__echo", `{"text":"x"}`)
	if !isErr || !strings.Contains(out, "MCP server rude") || !strings.Contains(out, "8 MiB") || took > time.Second {
		t.Errorf("the next call took %v: error %v, %q", took, isErr, out)
	}
	waitRunning(t, bin, 0)
}
