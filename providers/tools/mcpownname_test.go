package tools

import (
	"context"
	"net/http/httptest"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/providers"
)

var _ providers.MCPNamer = (*Toolbox)(nil)

// A tool offered under a name its own does not fit (repo.delete becomes
// mcp__gh__repo_delete_<hash>) is named back by MCPTool, as permission
// rules name it: mcp(gh/repo.delete).
func TestMCPToolNamesARenamedToolByItsOwnName(t *testing.T) {
	s := server.NewMCPServer("gh", "1.0.0")
	s.AddTool(mcpgo.NewTool("repo.delete"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("deleted"), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	defer ts.Close()
	m, err := StartMCP(context.Background(), MCPConfig{Servers: map[string]MCPServer{"gh": {Type: MCPHTTP, URL: ts.URL + "/mcp"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	box, err := New(Config{MCP: m})
	if err != nil {
		t.Fatal(err)
	}
	offered := box.Tools()[len(box.Tools())-1].Name
	if offered == "mcp__gh__repo.delete" {
		t.Fatalf("offered as %q; the test wants a renamed tool", offered)
	}
	if srv, tool, ok := box.MCPTool(offered); !ok || srv != "gh" || tool != "repo.delete" {
		t.Errorf("MCPTool(%q) = %q, %q, %v; want gh, repo.delete", offered, srv, tool, ok)
	}
	if _, _, ok := box.MCPTool("run_command"); ok {
		t.Error("run_command was named an MCP tool")
	}
}
