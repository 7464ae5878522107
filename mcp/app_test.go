package mcp

import (
	"context"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// appLink reads the MCP App link of a result (_meta.ui.resourceUri).
func appLink(t *testing.T, res *mcpgo.CallToolResult) string {
	t.Helper()
	if res.Meta == nil {
		return ""
	}
	ui, _ := res.Meta.AdditionalFields["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	return uri
}

// TestTheConsensusMapIsAnMCPApp pins issue 34's MCP App: the template is
// listed with the app MIME type; run_team's and team_status's results link
// their session's map in _meta.ui.resourceUri beside unchanged text and
// structured content; the page is served self-contained, holding the one
// renderer's map, with the task's text escaped.
func TestTheConsensusMapIsAnMCPApp(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	ctx := context.Background()
	tpls, err := c.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, tp := range tpls.ResourceTemplates {
		if tp.URITemplate.Raw() == appTemplate {
			listed = tp.MIMEType == "text/html;profile=mcp-app"
		}
	}
	if !listed {
		t.Fatalf("%s is not listed as text/html;profile=mcp-app: %+v", appTemplate, tpls.ResourceTemplates)
	}
	task := `Is <script>alert("x")</script> & "quoted" text safe?`
	run := callTool(t, c, "run_team", mustJSON(map[string]any{"task": task, "models": []string{"sim", "sim", "sim"}, "wait": true}))
	var res coordination.TeamResult
	decode(t, run, &res)
	want := "ui://massgen/session/" + res.SessionID
	if got := appLink(t, run); got != want {
		t.Fatalf("run_team's _meta.ui.resourceUri = %q, want %q", got, want)
	}
	if !strings.Contains(text(run), res.SessionID) || res.Winner == nil {
		t.Fatalf("run_team's text and structured content are not today's: %s", text(run))
	}
	status := callTool(t, c, "team_status", mustJSON(map[string]string{"session_id": res.SessionID}))
	if got := appLink(t, status); got != want {
		t.Fatalf("team_status's _meta.ui.resourceUri = %q, want %q", got, want)
	}
	if got := appLink(t, callTool(t, c, "team_status", `{"session_id":"team_nowhere"}`)); got != "" {
		t.Errorf("an error links an app: %q", got)
	}
	read, err := c.ReadResource(ctx, mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: want}})
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Contents) != 1 {
		t.Fatalf("%d contents", len(read.Contents))
	}
	page, ok := read.Contents[0].(mcpgo.TextResourceContents)
	if !ok || page.MIMEType != "text/html;profile=mcp-app" {
		t.Fatalf("the app is served as %T %q", read.Contents[0], page.MIMEType)
	}
	html := page.Text
	for _, w := range []string{"<!DOCTYPE html>", "<svg", `data-agent="agent_a"`, "cm-winner", "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp;"} {
		if !strings.Contains(html, w) {
			t.Errorf("the page lacks %q:\n%.2000s", w, html)
		}
	}
	// url(#…) is the map's own arrowhead marker; nothing else may be fetched.
	for _, bad := range []string{"<script", "src=", "href=\"http", "@import", "url(h", "url('", "url(\"", "url(/"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q: it must be self-contained and script-free", bad)
		}
	}
	if _, err := c.ReadResource(ctx, mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: "ui://massgen/session/team_nowhere"}}); err == nil {
		t.Error("an unknown session's app was served")
	}
}
