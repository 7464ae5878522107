package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/tidwall/gjson"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// The consensus map as an MCP App (the MCP Apps extension, SEP-1865):
// run_team's and team_status's results carry _meta.ui.resourceUri, naming
// ui://massgen/session/{id}, an HTML page of MIME type
// text/html;profile=mcp-app that a host able to render apps shows beside
// the result. Hosts that do not still read the text and structured content,
// which are unchanged. The page is the one renderer's map
// (report.ConsensusMapSVG) in a self-contained document: inline CSS, no
// script, no external fetch, every text escaped.

const (
	// extApps is the MCP Apps extension's identifier.
	extApps = "io.modelcontextprotocol/ui"
	// appMIME is the MIME type of an MCP App's HTML.
	appMIME = "text/html;profile=mcp-app"
	// appTemplate is the consensus map's resource, one per session.
	appTemplate = "ui://massgen/session/{id}"
)

// appURI is a session's consensus-map app.
func appURI(session string) string { return "ui://massgen/session/" + session }

// appResourceTemplate lists and serves the consensus-map app.
func appResourceTemplate(h *handler) server.ServerResourceTemplate {
	return server.ServerResourceTemplate{
		Template: mcpgo.NewResourceTemplate(appTemplate, "consensus map",
			mcpgo.WithTemplateDescription("A session's consensus map (agents, vote arrows, winner, cost) as an MCP App: HTML for hosts that render apps."),
			mcpgo.WithTemplateMIMEType(appMIME)),
		Handler: h.readApp,
	}
}

// readApp serves a session's consensus map, read only (Inspect: reading
// never decides the session), through the request's tenant.
func (h *handler) readApp(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	v, err := h.svc(ctx).Inspect(ctx, templateArg(req, "id"))
	if err != nil {
		return nil, bounded(h.shownError(ctx, err))
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{
		URI: req.Params.URI, MIMEType: appMIME, Text: appPage(v),
		// The page fetches nothing, so it asks for no CSP domains, and
		// wants no border of its own around the map.
		Meta: map[string]any{"ui": map[string]any{"prefersBorder": false}},
	}}, nil
}

// appPage is the consensus map's page: the session's task, status and
// winner above the map, as text a person reads at a glance.
func appPage(v *coordination.StatusView) string {
	var b strings.Builder
	id, status := "", ""
	if v.Result != nil {
		id, status = v.Result.SessionID, string(v.Result.Status)
	}
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`)
	fmt.Fprintf(&b, "<title>Consensus map · %s</title>", html.EscapeString(id))
	b.WriteString(`<style>body{margin:0;padding:12px;font:14px/1.4 system-ui,sans-serif;color:#1f2328;background:#fff}` +
		`h1{font-size:15px;margin:0 0 4px}p{margin:0 0 8px;color:#59636e}svg{width:100%;height:auto;max-height:80vh}` +
		`@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}p{color:#9198a1}}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>Team %s: %s</h1>", html.EscapeString(id), html.EscapeString(status))
	if line := appSummary(v); line != "" {
		fmt.Fprintf(&b, "<p>%s</p>", html.EscapeString(line))
	}
	fmt.Fprintf(&b, "<p>Task: %s</p>", html.EscapeString(cutText(v.Task, 300)))
	b.WriteString(report.ConsensusMapSVG(v))
	b.WriteString("</body></html>\n")
	return b.String()
}

// appSummary is the winner, or who is running, in one line.
func appSummary(v *coordination.StatusView) string {
	r := v.Result
	if r == nil {
		return ""
	}
	if r.Winner != nil {
		return fmt.Sprintf("Winner: %s (%s), %s.", r.Winner.AgentID, r.Winner.Label, coordination.Deref(r.HowChosen))
	}
	return fmt.Sprintf("%s, no winner yet.", coordination.Count(len(v.Agents), "agent"))
}

// withAppLink points a team result at its session's consensus-map app.
func withAppLink(res *mcpgo.CallToolResult, session string) *mcpgo.CallToolResult {
	if res == nil || session == "" {
		return res
	}
	if res.Meta == nil {
		res.Meta = &mcpgo.Meta{}
	}
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields["ui"] = map[string]any{"resourceUri": appURI(session)}
	return res
}

// linkApp adds the app's link to run_team's and team_status's results that
// show a session: not errors, questions for the user, task handles or
// estimates.
func linkApp(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := next(ctx, req)
		name := req.Params.Name
		if err != nil || res == nil || res.IsError || !res.ResultType.IsComplete() || (name != "run_team" && name != "team_status") {
			return res, err
		}
		return withAppLink(res, sessionOf(res.StructuredContent)), nil
	}
}

// sessionOf reads the session id of a team result or status view.
func sessionOf(structured any) string {
	var id string
	switch v := structured.(type) {
	case TeamResult:
		id = v.SessionID
	case *TeamResult:
		id = v.SessionID
	default:
		raw, err := json.Marshal(structured)
		if err != nil {
			return ""
		}
		id = gjson.GetBytes(raw, "session_id").String()
		if id == "" {
			id = gjson.GetBytes(raw, "result.session_id").String()
		}
	}
	if !coordination.ValidSessionID(id) {
		return ""
	}
	return id
}
