package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// New puts the MCP surface over a coordination service; any mcp-go client can
// then call its tools — here one in the same process. run_team with wait true
// blocks until the team has finished and returns the team result as
// structured content.
func ExampleNew() {
	ctx := context.Background()
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Parallel: 1})
	srv := mcp.New(svc, mcp.Options{Version: "example"})

	c, err := client.NewInProcessClient(srv.MCPServer())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "example", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		fmt.Println(err)
		return
	}

	var call mcpgo.CallToolRequest
	call.Params.Name = "run_team"
	call.Params.Arguments = map[string]any{
		"task":   "What is 17 * 23?",
		"models": []string{"sim/strong", "sim/strong", "sim"},
		"wait":   true,
	}
	res, err := c.CallTool(ctx, call)
	if err != nil || res.IsError {
		fmt.Println("run_team failed:", err, res)
		return
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var team struct {
		Status  string `json:"status"`
		Answers []any  `json:"answers"`
	}
	_ = json.Unmarshal(raw, &team)
	fmt.Println(team.Status, len(team.Answers), "answers")
	// Output: finished 3 answers
}
