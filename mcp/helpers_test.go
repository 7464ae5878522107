package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// newMemServer is a server over a fresh memory store. Tests validate every
// result against its output schema.
func newMemServer(t testing.TB, opts Options) *Server {
	t.Helper()
	opts.ValidateOutput = true
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop(), Reviews: checkpoint.Reviews{}})
	return New(svc, opts)
}

// newFileServer is a server over a file store in a temporary directory.
func newFileServer(t testing.TB, opts Options) *Server {
	t.Helper()
	opts.ValidateOutput = true
	svc := coordination.NewService(filestore.New(t.TempDir()), coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop(), Reviews: checkpoint.Reviews{}})
	return New(svc, opts)
}

// inProcess connects an mcp-go client to the server in process (the modern,
// stateless protocol era unless legacy is asked for).
func inProcess(t testing.TB, s *Server, legacy bool) *client.Client {
	t.Helper()
	var opts []client.ClientOption
	if legacy {
		// Pinning the newest version before 2026-07-28 keeps the client on
		// the initialize handshake (WithLegacyProtocolOnly, deprecated, did
		// the same).
		opts = append(opts, client.WithProtocolVersion(mcpgo.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	c, err := client.NewInProcessClientWithOptions(s.MCPServer(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "test", Version: "0"}
	if legacy {
		init.Params.ProtocolVersion = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// callTool calls a tool with arguments given as JSON text (so tests can send
// anything, including malformed arguments).
func callTool(t testing.TB, c *client.Client, name, argsJSON string) *mcpgo.CallToolResult {
	t.Helper()
	return callToolCtx(context.Background(), t, c, name, argsJSON, nil)
}

func callToolCtx(ctx context.Context, t testing.TB, c *client.Client, name, argsJSON string, meta *mcpgo.Meta) *mcpgo.CallToolResult {
	t.Helper()
	var req mcpgo.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = json.RawMessage(argsJSON)
	req.Params.Meta = meta
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s(%s): protocol error %v", name, argsJSON, err)
	}
	return res
}

// decode reads a result's structuredContent into v, failing on an error
// result.
func decode(t testing.TB, res *mcpgo.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", text(res))
	}
	if res.StructuredContent == nil {
		t.Fatalf("result has no structuredContent: %s", text(res))
	}
	body, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("structuredContent does not decode: %v\n%s", err, body)
	}
}

// text is the text content of a result.
func text(res *mcpgo.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// wantError checks an isError result names what went wrong and how to fix it.
func wantError(t testing.TB, res *mcpgo.CallToolResult, code string, words ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an error result (%s), got: %s", code, text(res))
	}
	msg := text(res)
	if code != "" {
		got := ""
		if res.Meta != nil {
			got, _ = res.Meta.AdditionalFields["massgen/error"].(string)
		}
		if got != code {
			t.Errorf("error code = %q, want %q; message: %s", got, code, msg)
		}
		if !strings.Contains(msg, "\nTo fix: ") {
			t.Errorf("error has no fix line: %s", msg)
		}
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rawStdio is a line-level JSON-RPC client over the real stdio transport,
// run in process over pipes: it sees the exact order of what the server
// writes.
type rawStdio struct {
	t      testing.TB
	in     *io.PipeWriter // the server's stdin
	lines  chan rawLine
	served chan error
	mu     sync.Mutex
	nextID int
	// ownPings leaves the server's pings to the test instead of answering.
	ownPings bool
}

// serveRaw runs the server's stdio transport on pipes. mcp-go keeps one stdio
// session per process, so tests using it must not run in parallel.
func serveRaw(t testing.TB, s *Server) *rawStdio {
	t.Helper()
	return serveRawUntil(t, s, context.Background())
}

// serveRawUntil is serveRaw serving until ctx ends, as the binary serves
// until a signal.
func serveRawUntil(t testing.TB, s *Server, ctx context.Context) *rawStdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &rawStdio{t: t, in: inW, lines: make(chan rawLine, 4096), served: make(chan error, 1)}
	go func() {
		err := s.ServeStdio(ctx, inR, outW)
		outW.Close()
		r.served <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			r.lines <- rawLine{data: append([]byte(nil), sc.Bytes()...), at: time.Now()}
		}
		close(r.lines)
	}()
	t.Cleanup(func() { r.close() })
	r.send(map[string]any{"jsonrpc": "2.0", "id": r.id(), "method": "initialize", "params": map[string]any{
		"protocolVersion": mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw", "version": "0"},
	}})
	r.next()
	r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return r
}

func (r *rawStdio) id() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	return r.nextID
}

func (r *rawStdio) send(msg any) {
	r.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		r.t.Fatalf("write to server stdin: %v", err)
	}
}

// callTool sends a tools/call and returns its id.
func (r *rawStdio) callTool(name string, args any, progressToken any) int {
	id := r.id()
	params := map[string]any{"name": name, "arguments": args}
	if progressToken != nil {
		params["_meta"] = map[string]any{"progressToken": progressToken}
	}
	r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
	return id
}

// wireMsg is any line the server wrote.
type wireMsg struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// rawLine is one line the server wrote, and when the pipe gave it up (the
// pipe is unbuffered: when the server wrote it).
type rawLine struct {
	data json.RawMessage
	at   time.Time
}

func (r *rawStdio) next() wireMsg {
	r.t.Helper()
	m, _ := r.nextAt()
	return m
}

// nextAt is next, with when the server wrote the message.
func (r *rawStdio) nextAt() (wireMsg, time.Time) {
	r.t.Helper()
	select {
	case got, ok := <-r.lines:
		if !ok {
			r.t.Fatal("the server closed its output")
		}
		line := got.data
		// A client answers the server's pings (clientsync.go), as the
		// SDKs do, unless a test reads them itself.
		var ping struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &ping) == nil && ping.Method == "ping" && !r.ownPings {
			r.send(map[string]any{"jsonrpc": "2.0", "id": ping.ID, "result": map[string]any{}})
			return r.nextAt()
		}
		var m wireMsg
		if err := json.Unmarshal(line, &m); err != nil {
			r.t.Fatalf("server wrote a line that is not JSON-RPC: %s", line)
		}
		return m, got.at
	case <-time.After(30 * time.Second):
		r.t.Fatal("no message from the server within 30s")
	}
	return wireMsg{}, time.Time{}
}

// close ends stdin and waits for the server to return.
func (r *rawStdio) close() error {
	r.in.Close()
	select {
	case err := <-r.served:
		r.served <- err
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("ServeStdio did not return within 30s of stdin closing")
	}
}

// toolResult reads the result of a raw tools/call.
func toolResult(t testing.TB, m wireMsg) *mcpgo.CallToolResult {
	t.Helper()
	if len(m.Error) > 0 {
		t.Fatalf("protocol error: %s", m.Error)
	}
	res, err := mcpgo.ParseCallToolResult(&m.Result)
	if err != nil {
		t.Fatalf("cannot parse tool result %s: %v", m.Result, err)
	}
	return res
}
