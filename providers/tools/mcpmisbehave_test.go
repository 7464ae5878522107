package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
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

// TestMCPCallToAServerThatStopsReadingEndsAtItsTimeout: a server that hangs
// (here: stopped) reads nothing more, and once the pipe to it is full a
// request cannot even be written. A call must still end at its timeout,
// not hang in the write (and every later call behind it); the server is
// then stopped, and the next call restarts it.
func TestMCPCallToAServerThatStopsReadingEndsAtItsTimeout(t *testing.T) {
	m, _ := startRude(t, time.Second)
	res, _ := m.Call(context.Background(), "mcp__rude__stop", json.RawMessage(`{}`))
	if !res.IsError || !strings.Contains(res.Content, "did not answer stop within 1s") {
		t.Errorf("the call that stops the server: %+v", res)
	}
	// 256 KiB of arguments: more than the pipe holds.
	args := json.RawMessage(fmt.Sprintf(`{"text":%q}`, strings.Repeat("z", 256<<10)))
	done := make(chan struct {
		res providers.ToolResult
		err error
	}, 1)
	go func() {
		res, err := m.Call(context.Background(), "mcp__rude__echo", args)
		done <- struct {
			res providers.ToolResult
			err error
		}{res, err}
	}()
	select {
	case got := <-done:
		if got.err != nil || !got.res.IsError || !strings.Contains(got.res.Content, "did not answer echo within 1s") {
			t.Errorf("the call to the stopped server: %+v %v", got.res, got.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call to a server that reads nothing is still waiting after 10 s (its timeout is 1 s)")
	}
	res, err := m.Call(context.Background(), "mcp__rude__echo", json.RawMessage(`{"text":"back"}`))
	if err != nil || res.IsError || res.Content != "echo: back" {
		t.Errorf("the call after it (a restarted server): %+v %v", res, err)
	}
}

// TestMCPCallThatTimesOutDropsItsLateAnswer: a call that times out is an
// error result and leaves the server running (it may only be slow); its
// answer, when it comes later, is not taken for the answer of a call made
// after it, and nothing of the timed-out call is left pending.
func TestMCPCallThatTimesOutDropsItsLateAnswer(t *testing.T) {
	m, _ := startRude(t, 3*time.Second)
	call := func(name, args string) (string, bool) {
		t.Helper()
		res, err := m.Call(context.Background(), name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content, res.IsError
	}
	boot, _ := call("mcp__rude__boot", `{}`)
	// Its answer comes at 4.5 s, while the next call (made at 3 s,
	// answered at 5 s) waits for its own.
	if out, isErr := call("mcp__rude__slow", `{"ms":4500}`); !isErr || !strings.Contains(out, "did not answer slow within 3s") {
		t.Errorf("the call that timed out: %v %q", isErr, out)
	}
	if out, isErr := call("mcp__rude__slow", `{"ms":2000}`); isErr || out != "slow 2000 done" {
		t.Errorf("the call made after it: %v %q", isErr, out)
	}
	for i := range 3 {
		if out, isErr := call("mcp__rude__echo", fmt.Sprintf(`{"text":"%d"}`, i)); isErr || out != fmt.Sprintf("echo: %d", i) {
			t.Errorf("echo %d: %v %q", i, isErr, out)
		}
	}
	if again, _ := call("mcp__rude__boot", `{}`); again != boot {
		t.Errorf("a timeout restarted the server: boot %s, then %s", boot, again)
	}
	if n := pendingRequests(t, m.servers[0]); n != 0 {
		t.Errorf("%d requests still pending", n)
	}
}

// pendingRequests counts the requests the server's stdio transport still
// waits an answer for (its map of response channels, read by reflection).
func pendingRequests(t *testing.T, s *mcpServer) int {
	t.Helper()
	s.mu.Lock()
	cl := s.cl
	s.mu.Unlock()
	if cl == nil {
		t.Fatal("the server has no connection")
	}
	v := reflect.ValueOf(cl.GetTransport())
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	f := v.FieldByName("responses")
	if !f.IsValid() || f.Kind() != reflect.Map {
		t.Fatalf("%s has no map of responses", v.Type())
	}
	return f.Len()
}
