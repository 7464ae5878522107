package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// teamStatusArgs are team_status's arguments.
type teamStatusArgs struct {
	SessionID string `json:"session_id" jsonschema_description:"The session, from run_team or start_team."`
	Format    string `json:"format,omitempty" jsonschema:"enum=markdown,enum=json" jsonschema_description:"markdown (default): a readable report plus the same data structured. json: the data only."`
}

func teamStatusTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("team_status",
		mcpgo.WithDescription("Where a team stands: each agent's state, answer previews, votes and whether they are stale, consensus, next agents, the timeline, tokens and cost, and the result once finished. "+
			"Cheap; poll it while run_team works in the background."),
		inputSchema[teamStatusArgs](),
		mcpgo.WithOutputSchema[StatusView](),
		annotations("Team status", true, true, false),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.teamStatus)}
}

func (h *handler) teamStatus(ctx context.Context, req mcpgo.CallToolRequest, args teamStatusArgs) (*mcpgo.CallToolResult, error) {
	v, err := h.svc(ctx).Status(ctx, args.SessionID)
	if err != nil {
		return nil, err
	}
	out := wireStatusView(*v)
	if args.Format == "json" {
		body, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("cannot encode the status of %s: %w", args.SessionID, err)
		}
		return mcpgo.NewToolResultStructured(out, string(body)), nil
	}
	// The same pictures as `massgen-mcp status`; without the ledger the
	// report still has its table.
	l, err := h.svc(ctx).Ledger(ctx, args.SessionID)
	if err != nil {
		l = nil
	}
	return mcpgo.NewToolResultStructured(out, report.Markdown(v)+report.StatusSections(v, l, 100)), nil
}
