package mcp

import (
	"context"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// finalizeTeamArgs are finalize_team's arguments.
type finalizeTeamArgs struct {
	SessionID string `json:"session_id"`
	Final     string `json:"final,omitempty" jsonschema:"enum=winner,enum=present,enum=synthesize" jsonschema_description:"Default: the session's."`
}

func finalizeTeamTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("finalize_team",
		mcpgo.WithDescription("End a team now: apply the rule to the standing votes or force a winner, and write the final answer (also finishes a decided session). "+
			"Returns the team result, as run_team. On status running (after 50 s) call again with the same arguments."),
		inputSchema[finalizeTeamArgs](),
		// Open world: present and synthesize call a model for the final answer.
		annotations("Finalize a team", false, false, true),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.finalizeTeam)}
}

func (h *handler) finalizeTeam(ctx context.Context, req mcpgo.CallToolRequest, args finalizeTeamArgs) (*mcpgo.CallToolResult, error) {
	p := h.startProgress(ctx, req)
	p.report("finalizing " + args.SessionID)
	res, pending, err := awaitFlight(h, ctx, flightCall{tool: "finalize_team", args: args, session: args.SessionID, what: "finalizing " + args.SessionID},
		func(ctx context.Context) (*coordination.TeamResult, error) {
			return h.svc(ctx).Finalize(ctx, args.SessionID, coordination.FinalStrategy(args.Final))
		})
	// Progress must be fully written before the result (see progress.go).
	p.stop()
	if err != nil || pending != nil {
		return pending, err
	}
	return teamResult(res), nil
}
