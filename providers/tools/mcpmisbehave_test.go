package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

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
// (here: its stdin never read again) reads nothing more, and once the pipe to it is full a
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
	// The transport forgets an answered request just after handing its
	// answer over: give it a moment.
	n := pendingRequests(t, m.servers[0])
	for end := time.Now().Add(time.Second); n != 0 && time.Now().Before(end); n = pendingRequests(t, m.servers[0]) {
		time.Sleep(10 * time.Millisecond)
	}
	if n != 0 {
		t.Errorf("%d requests still pending", n)
	}
}

// pendingRequests counts the requests the server's stdio transport still
// waits an answer for (its map of response channels, read by reflection
// under the transport's own lock, as its reader changes it).
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
	mu := v.FieldByName("mu")
	if !mu.IsValid() || mu.Type() != reflect.TypeFor[sync.RWMutex]() || !mu.CanAddr() {
		t.Fatalf("%s has no lock of its responses", v.Type())
	}
	lock := (*sync.RWMutex)(unsafe.Pointer(mu.UnsafeAddr()))
	lock.RLock()
	defer lock.RUnlock()
	return f.Len()
}

// TestRemoteMCPServerThatSendsAnOversizedMessageIsStopped: a streamable-http
// server's answer is one JSON-RPC message, as a whole JSON body or as one
// event of an SSE stream, and one far larger than any tool result (a bug,
// or a hostile server) must not be read whole into this process's memory,
// nor, streamed as a data line that never ends, read for as long as the
// server keeps writing. Past the limit the rest is not read, the server is
// dropped for the session, and its calls (the one in flight and every later
// one) fail at once naming the server and the limit. Answers within the
// limit are served, and the limit is on one message, not on a stream.
func TestRemoteMCPServerThatSendsAnOversizedMessageIsStopped(t *testing.T) {
	const flood = 24 << 20
	srv := remoteFlooder(t, flood)
	defer srv.ts.Close()
	read := &countingTransport{read: map[string]*atomic.Int64{}}
	m, err := StartMCP(context.Background(), MCPConfig{
		Servers: map[string]MCPServer{
			"remote":   {Type: MCPHTTP, URL: srv.ts.URL + "/json"},
			"streamed": {Type: MCPHTTP, URL: srv.ts.URL + "/sse"},
		},
		CallTimeout: 10 * time.Second,
		HTTPClient:  &http.Client{Transport: read},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
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
	if out, isErr, _ := call("mcp__remote__echo", fmt.Sprintf(`{"text":%q}`, big)); isErr || !strings.HasPrefix(out, "echo: yyy") {
		t.Fatalf("a 1 MiB answer: error %v, %.80q", isErr, out)
	}
	// Twelve 1 MiB notifications, then a 1 MiB answer, on one SSE stream.
	if out, isErr, _ := call("mcp__streamed__chatty", `{}`); isErr || !strings.HasPrefix(out, "yyy") {
		t.Fatalf("a 13 MiB SSE stream of 1 MiB messages: error %v, %.300q", isErr, out)
	}

	for _, c := range []struct{ server, path, what string }{
		{"remote", "/json", "a 24 MiB JSON body"},
		{"streamed", "/sse", "an SSE data line that does not end"},
	} {
		before := read.bytes(c.path)
		out, isErr, took := call("mcp__"+c.server+"__big", `{}`)
		if !isErr || !strings.Contains(out, "MCP server "+c.server) || !strings.Contains(out, "8 MiB") || took > 5*time.Second {
			t.Errorf("the call answered with %s took %v: error %v, %.300q", c.what, took, isErr, out)
		}
		if n := read.bytes(c.path) - before; n > maxMCPMessage+64<<10 {
			t.Errorf("%d MiB of %s were read", n>>20, c.what)
		}
		select {
		case <-srv.ended[c.path]:
		case <-time.After(5 * time.Second):
			t.Errorf("the connection that carried %s is still open", c.what)
		}
		calls := srv.calls(c.path)
		out, isErr, took = call("mcp__"+c.server+"__echo", `{"text":"x"}`)
		if !isErr || !strings.Contains(out, "MCP server "+c.server) || !strings.Contains(out, "8 MiB") || took > time.Second {
			t.Errorf("the next call to %s took %v: error %v, %q", c.server, took, isErr, out)
		}
		if n := srv.calls(c.path) - calls; n != 0 {
			t.Errorf("%d calls went on to %s after it sent %s", n, c.server, c.what)
		}
	}
}

// TestRemoteMCPServerMessageLimitWithoutAGivenClient: the limit holds on the
// client the provider makes itself when none is given (as in a session),
// and on the answers to starting a server (here: its list of tools).
func TestRemoteMCPServerMessageLimitWithoutAGivenClient(t *testing.T) {
	srv := remoteFlooder(t, 24<<20)
	defer srv.ts.Close()
	_, err := StartMCP(context.Background(), MCPConfig{
		Servers:     map[string]MCPServer{"lister": {Type: MCPHTTP, URL: srv.ts.URL + "/list"}},
		CallTimeout: 10 * time.Second,
	})
	if err == nil || !strings.Contains(err.Error(), "MCP server lister") || !strings.Contains(err.Error(), "8 MiB") {
		t.Errorf("a server whose list of tools is 24 MiB started: %v", err)
	}
	m, err := StartMCP(context.Background(), MCPConfig{
		Servers:     map[string]MCPServer{"remote": {Type: MCPHTTP, URL: srv.ts.URL + "/json"}},
		CallTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := m.Call(context.Background(), "mcp__remote__big", json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "MCP server remote") || !strings.Contains(res.Content, "8 MiB") {
		t.Errorf("a 24 MiB JSON body: %v %.300q", err, res.Content)
	}
}

// flooder is a streamable-http MCP server (mcp-go's) whose tools echo, big
// and chatty are answered by hand when called (and, at /list, whose list of
// tools is one JSON body of the given size): big at /json with one JSON
// body of the given size, at /sse with an SSE data line of that size that
// never ends (the stream is held open until the client leaves); chatty with
// an SSE stream of twelve 1 MiB notifications and a 1 MiB answer.
type flooder struct {
	ts    *httptest.Server
	ended map[string]chan struct{} // closed when big's handler returns
	mu    sync.Mutex
	n     map[string]int // tools/call requests by path
}

func (f *flooder) calls(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[path]
}

func remoteFlooder(t *testing.T, size int) *flooder {
	t.Helper()
	s := server.NewMCPServer("remote", "1.0.0")
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithString("text", mcpgo.Required())),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	for _, name := range []string{"big", "chatty"} {
		s.AddTool(mcpgo.NewTool(name), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultError("answered by the test's handler"), nil
		})
	}
	h := server.NewStreamableHTTPServer(s)
	f := &flooder{n: map[string]int{}, ended: map[string]chan struct{}{"/json": make(chan struct{}), "/sse": make(chan struct{})}}
	var once sync.Map
	f.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		if req.Method == "tools/list" && r.URL.Path == "/list" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","description":"%s","inputSchema":{"type":"object"}}]}}`, req.ID, strings.Repeat("y", size))
			return
		}
		if req.Method != "tools/call" {
			h.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		f.n[r.URL.Path]++
		f.mu.Unlock()
		head := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"`
		chunk := bytes.Repeat([]byte("y"), 64<<10)
		switch {
		case req.Params.Name == "big":
			defer func() {
				if _, done := once.LoadOrStore(r.URL.Path, true); !done {
					close(f.ended[r.URL.Path])
				}
			}()
			if r.URL.Path == "/sse" {
				w.Header().Set("Content-Type", "text/event-stream")
				head = "data: " + head
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			if _, err := io.WriteString(w, head); err != nil {
				return
			}
			for written := 0; written < size; written += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			if r.URL.Path == "/sse" {
				w.(http.Flusher).Flush()
				<-r.Context().Done() // the line never ends
				return
			}
			_, _ = io.WriteString(w, `"}]}}`)
		case req.Params.Name == "chatty" && r.URL.Path == "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			text := strings.Repeat("y", 1<<20)
			for i := range 12 {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"%d %s\"}}\n\n", i, text)
			}
			fmt.Fprintf(w, "data: %s%s\"}]}}\n\n", head, text)
		default:
			h.ServeHTTP(w, r)
		}
	}))
	return f
}

// countingTransport counts the bytes read of each path's response bodies.
type countingTransport struct {
	mu   sync.Mutex
	read map[string]*atomic.Int64
}

func (c *countingTransport) bytes(path string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.read[path]; n != nil {
		return n.Load()
	}
	return 0
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	n := c.read[req.URL.Path]
	if n == nil {
		n = new(atomic.Int64)
		c.read[req.URL.Path] = n
	}
	c.mu.Unlock()
	resp.Body = countingBody{resp.Body, n}
	return resp, nil
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
