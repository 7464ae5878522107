package mcp

import (
	"context"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// finalizeTeamArgs are finalize_team's arguments.
type finalizeTeamArgs struct {
	SessionID string `json:"session_id" jsonschema_description:"The session to end now."`
	Final     string `json:"final,omitempty" jsonschema:"enum=winner,enum=present,enum=synthesize" jsonschema_description:"How to write the final answer (default: the session's own setting): winner, present or synthesize."`
}

func finalizeTeamTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("finalize_team",
		mcpgo.WithDescription("End a team now: apply the consensus rule to the standing votes, or force a winner (most standing votes, then most current votes, then the first answer), and write the final answer with the given strategy. "+
			"Also the way to finish a decided session (final present or synthesize). Returns the team result."),
		inputSchema[finalizeTeamArgs](),
		mcpgo.WithOutputSchema[TeamResult](),
		// Open world: present and synthesize call a model for the final answer.
		annotations("Finalize a team", false, false, true),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.finalizeTeam)}
}

func (h *handler) finalizeTeam(ctx context.Context, req mcpgo.CallToolRequest, args finalizeTeamArgs) (*mcpgo.CallToolResult, error) {
	p := h.startProgress(ctx, req)
	p.report("finalizing " + args.SessionID)
	res, err := h.svc(ctx).Finalize(ctx, args.SessionID, coordination.FinalStrategy(args.Final))
	// Progress must be fully written before the result (see progress.go).
	p.stop()
	if err != nil {
		return nil, err
	}
	return teamResult(res), nil
}
