package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// errorPage is a proxy's error page of about 3 MiB: under the 8 MiB limit
// on one message, far over what a tool result may hold.
var errorPage = "<html><body><h1>500 Internal Server Error</h1>" + strings.Repeat("<p>upstream stack frame</p>\n", 3<<20/27) + "</body></html>"

// errorPager is a streamable-http MCP server (mcp-go's) whose tool page is
// answered with an HTTP 500 and errorPage, and whose tool rpc is answered
// with a JSON-RPC error whose message is errorPage. With failStart, every
// request is answered with the page, its start's first.
func errorPager(t *testing.T, failStart bool) *httptest.Server {
	t.Helper()
	s := server.NewMCPServer("pager", "1.0.0")
	for _, name := range []string{"page", "rpc"} {
		s.AddTool(mcpgo.NewTool(name), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultError("answered by the test's handler"), nil
		})
	}
	h := server.NewStreamableHTTPServer(s)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		switch {
		case failStart || (req.Method == "tools/call" && req.Params.Name == "page"):
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, errorPage)
		case req.Method == "tools/call" && req.Params.Name == "rpc":
			w.Header().Set("Content-Type", "application/json")
			msg, _ := json.Marshal(errorPage)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`, req.ID, msg)
		default:
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestARemoteMCPServersErrorPageIsCutToTheToolOutputCap: a 3 MiB error
// page (an HTTP 500's body, or a JSON-RPC error's message) reaches the
// model as at most what a command's output may be, ending in a note that
// names the server and says how much was left out.
func TestARemoteMCPServersErrorPageIsCutToTheToolOutputCap(t *testing.T) {
	ts := errorPager(t, false)
	m, err := StartMCP(context.Background(), MCPConfig{
		Servers:     map[string]MCPServer{"wiki": {Type: MCPHTTP, URL: ts.URL}},
		CallTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, tool := range []string{"page", "rpc"} {
		res, err := m.Call(context.Background(), "mcp__wiki__"+tool, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(res.Content, "MCP server wiki") {
			t.Errorf("%s: error %v, %.200q", tool, res.IsError, res.Content)
		}
		if len(res.Content) > sandbox.DefaultOutputCap {
			t.Errorf("%s: the tool result holds %d bytes of the server's error, more than the %d a command's output may hold", tool, len(res.Content), sandbox.DefaultOutputCap)
		}
		tailNote := res.Content[max(0, len(res.Content)-300):]
		if !strings.Contains(tailNote, "not shown") || !strings.Contains(tailNote, "MCP server wiki") {
			t.Errorf("%s: the result does not end in a note naming the server and what was cut: %q", tool, tailNote)
		}
	}
}

// TestARemoteMCPServerThatFailsToStartWithAnErrorPageIsCut: the error of a
// server that answers its start with a 3 MiB page is cut as well (it is
// what a restart that fails puts in every later tool result).
func TestARemoteMCPServerThatFailsToStartWithAnErrorPageIsCut(t *testing.T) {
	ts := errorPager(t, true)
	_, err := StartMCP(context.Background(), MCPConfig{
		Servers:     map[string]MCPServer{"wiki": {Type: MCPHTTP, URL: ts.URL}},
		CallTimeout: 10 * time.Second,
	})
	if err == nil {
		t.Fatal("a server that answers its start with a 500 started")
	}
	if msg := err.Error(); len(msg) > sandbox.DefaultOutputCap || !strings.Contains(msg, "MCP server wiki") || !strings.Contains(msg, "500") {
		t.Errorf("the start's error is %d bytes: %.300q", len(msg), msg)
	}
}
