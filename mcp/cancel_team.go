package mcp

import (
	"context"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// cancelTeamArgs are cancel_team's arguments.
type cancelTeamArgs struct {
	SessionID string `json:"session_id" jsonschema_description:"The session to stop."`
}

func cancelTeamTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("cancel_team",
		mcpgo.WithDescription("Stop a team, cancelling its provider calls. Nothing is lost: the session is left cancelled and resumes with run_team{session_id} (or by stepping it again). Returns the team result as it stands."),
		inputSchema[cancelTeamArgs](),
		mcpgo.WithOutputSchema[TeamResult](),
		annotations("Cancel a team", false, true, false),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.cancelTeam)}
}

func (h *handler) cancelTeam(ctx context.Context, req mcpgo.CallToolRequest, args cancelTeamArgs) (*mcpgo.CallToolResult, error) {
	res, err := h.svc(ctx).Cancel(ctx, args.SessionID)
	if err != nil {
		return nil, err
	}
	return teamResult(res), nil
}
