package mcp

import (
	"context"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// cancelTeamArgs are cancel_team's arguments.
type cancelTeamArgs struct {
	SessionID string `json:"session_id"`
}

func cancelTeamTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("cancel_team",
		mcpgo.WithDescription("Stop a team and its provider calls. Nothing is lost: the session resumes with run_team{session_id} or step. Returns the team result as it stands."),
		inputSchema[cancelTeamArgs](),
		annotations("Cancel a team", false, true, false),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.cancelTeam)}
}

func (h *handler) cancelTeam(ctx context.Context, req mcpgo.CallToolRequest, args cancelTeamArgs) (*mcpgo.CallToolResult, error) {
	// A step or final call detached from its caller (pending.go) is the
	// session's too.
	h.flights.cancelSession(tenantOf(ctx), args.SessionID)
	res, err := h.svc(ctx).Cancel(ctx, args.SessionID)
	if err != nil {
		return nil, err
	}
	return teamResult(res), nil
}
