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
	SessionID string `json:"session_id"`
	Format    string `json:"format,omitempty" jsonschema:"enum=markdown,enum=json" jsonschema_description:"json: the data only, without the report."`
	Detail    string `json:"detail,omitempty" jsonschema:"enum=brief,enum=full" jsonschema_description:"full: answers whole, every event, pictures."`
	Since     string `json:"since,omitempty" jsonschema_description:"A cursor from the last call: send only changes."`
}

func teamStatusTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("team_status",
		mcpgo.WithDescription("Where a team stands: agents, answers, votes, consensus, next agents, timeline, cost. "+
			"Returns {result, task, rules, agents, timeline, cursor}; result is the team result. Cheap; poll with since: cursor."),
		inputSchema[teamStatusArgs](),
		annotations("Team status", true, true, false),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.teamStatus)}
}

func (h *handler) teamStatus(ctx context.Context, req mcpgo.CallToolRequest, args teamStatusArgs) (*mcpgo.CallToolResult, error) {
	v, err := h.svc(ctx).Status(ctx, args.SessionID)
	if err != nil {
		return nil, err
	}
	shown, partial := v, args.Since != ""
	if partial {
		c, err := parseCursor(args.Since, args.SessionID)
		if err != nil {
			return nil, err
		}
		shown = since(v, c)
	}
	cursor := cursorOf(v).String()
	full := args.Detail == detailFull
	out, c := briefStatus(v, shown, partial, cursor, full)
	if args.Format == "json" {
		body, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("cannot encode the status of %s: %w", args.SessionID, err)
		}
		return mcpgo.NewToolResultStructured(out, string(body)), nil
	}
	if !full || partial {
		res := mcpgo.NewToolResultStructured(out, briefStatusText(v, shown, partial, cursor, c))
		res.Content = append(res.Content, statusLinks(v, shown, out.Result != nil && out.Result.FinalAnswerURI != "")...)
		return res, nil
	}
	// The same pictures as `massgen-mcp status`; without the ledger the
	// report still has its table.
	l, err := h.svc(ctx).Ledger(ctx, args.SessionID)
	if err != nil {
		l = nil
	}
	return mcpgo.NewToolResultStructured(out, clientPlace.Markdown(v)+report.StatusSections(v, l, 100)+cursorLine(args.SessionID, cursor)), nil
}
