package tools

import (
	"context"
	"strings"
	"testing"
	"time"
)

// An operator's streamable-http MCP server may take its credentials in its
// URL (https://user:password@mcp.internal/mcp). A server that does not
// answer fails the step with an error every reader of the session sees
// (the step's result, last_error, a dropped agent's message): it names the
// server, but not the URL's user or password.
func TestAnHTTPMCPServerThatFailsNamesNoneOfItsURLsCredentials(t *testing.T) {
	_, err := StartMCP(context.Background(), MCPConfig{
		Servers:      map[string]MCPServer{"remote": {Type: MCPHTTP, URL: "http://mcpuser-7d:mcp-pass-5e1a@127.0.0.1:1/mcp"}},
		StartTimeout: 2 * time.Second,
	})
	if err == nil {
		t.Fatal("a server at a closed port started")
	}
	if !strings.Contains(err.Error(), "MCP server remote") {
		t.Errorf("the error does not name the server: %v", err)
	}
	for _, leak := range []string{"mcp-pass-5e1a", "mcpuser-7d"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("the error shows %q: %v", leak, err)
		}
	}
}
