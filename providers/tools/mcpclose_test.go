package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// slowGoodbye is a streamable-http MCP server (mcp-go's) that speaks the
// protocol before 2026-07-28 (it refuses server/discover), so its client
// ends the session with a DELETE, and that DELETE hangs until release is
// called (or the test ends): deleting is closed when it arrives.
func slowGoodbye(t *testing.T) (url string, deleting chan struct{}, release func()) {
	t.Helper()
	s := server.NewMCPServer("slow", "1.0.0")
	s.AddTool(mcpgo.NewTool("echo"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("echo"), nil
	})
	h := server.NewStreamableHTTPServer(s)
	deleting, released := make(chan struct{}), make(chan struct{})
	var once, releasing sync.Once
	release = func() { releasing.Do(func() { close(released) }) }
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			once.Do(func() { close(deleting) })
			select {
			case <-released:
			case <-r.Context().Done():
			}
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			var req struct {
				Method string `json:"method"`
			}
			body, _ := io.ReadAll(r.Body)
			if json.Unmarshal(body, &req) == nil && req.Method == string(mcpgo.MethodServerDiscover) {
				http.NotFound(w, r)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { release(); ts.Close() })
	return ts.URL, deleting, release
}

// TestClosingARemoteMCPServerHoldsNoCallBehindItsGoodbye: closing a remote
// server sends it a DELETE that may wait 5 s for an answer; a call to the
// server meanwhile learns at once that it is closed, instead of waiting
// behind the goodbye for the server's lock.
func TestClosingARemoteMCPServerHoldsNoCallBehindItsGoodbye(t *testing.T) {
	url, deleting, release := slowGoodbye(t)
	m, err := StartMCP(context.Background(), MCPConfig{
		Servers:     map[string]MCPServer{"slow": {Type: MCPHTTP, URL: url}},
		CallTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := m.Call(context.Background(), "mcp__slow__echo", json.RawMessage(`{}`)); err != nil || res.IsError {
		t.Fatalf("a call before the close: %v %q", err, res.Content)
	}
	closed := make(chan struct{})
	go func() { m.Close(); close(closed) }()
	select {
	case <-deleting:
	case <-time.After(5 * time.Second):
		t.Fatal("the close sent no DELETE: the test's server does not keep sessions")
	}
	start := time.Now()
	res, err := m.Call(context.Background(), "mcp__slow__echo", json.RawMessage(`{}`))
	took := time.Since(start)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "MCP server slow is closed") {
		t.Errorf("a call during the close: %v %q", err, res.Content)
	}
	if took > time.Second {
		t.Errorf("a call during the close waited %v behind the server's goodbye", took)
	}
	release()
	<-closed
}
