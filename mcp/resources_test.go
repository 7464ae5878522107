package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

func readResource(t *testing.T, c interface {
	ReadResource(context.Context, mcpgo.ReadResourceRequest) (*mcpgo.ReadResourceResult, error)
}, uri string) (mcpgo.TextResourceContents, error) {
	t.Helper()
	var req mcpgo.ReadResourceRequest
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		return mcpgo.TextResourceContents{}, err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcpgo.TextResourceContents)
	if !ok {
		t.Fatalf("%s: not text: %T", uri, res.Contents[0])
	}
	return tc, nil
}

func TestResourcesShowSessionsStatusEventsAndAnswers(t *testing.T) {
	s := newFileServer(t, Options{})
	c := inProcess(t, s, false)
	ctx := context.Background()

	list, err := c.ListResources(ctx, mcpgo.ListResourcesRequest{})
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != sessionsURI {
		t.Fatalf("resources/list: %v %+v", err, list)
	}
	templates, err := c.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{})
	if err != nil || len(templates.ResourceTemplates) != 7 { // the six of massgen:// and the consensus-map app (app.go)
		t.Fatalf("resources/templates/list: %v %+v", err, templates)
	}

	empty, err := readResource(t, c, sessionsURI)
	if err != nil || !strings.Contains(empty.Text, `"sessions": []`) {
		t.Fatalf("empty listing: %v %s", err, empty.Text)
	}

	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", `{"task":"What is 17 * 23?","models":["sim/strong","sim/strong","sim"],"wait":true,"session_id":"done"}`), &res)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", `{"task":"What is 6 * 7?","models":["sim","sim"],"session_id":"fresh"}`), &started)

	body, err := readResource(t, c, sessionsURI)
	if err != nil {
		t.Fatal(err)
	}
	var sessions struct {
		Sessions []coordination.SessionSummary `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(body.Text), &sessions); err != nil || len(sessions.Sessions) != 2 {
		t.Fatalf("sessions: %v %s", err, body.Text)
	}
	byID := map[string]coordination.SessionSummary{}
	for _, ss := range sessions.Sessions {
		byID[ss.SessionID] = ss
	}
	if d := byID["done"]; d.Status != coordination.StatusFinished || d.Winner == nil || d.Driver != coordination.DriverRun {
		t.Errorf("finished session listed as %+v", d)
	}
	if f := byID["fresh"]; f.Status != coordination.StatusRunning || f.Driver != coordination.DriverStep || len(f.NextAgents) != 2 {
		t.Errorf("fresh session listed as %+v", f)
	}

	status, err := readResource(t, c, "massgen://sessions/done/status")
	if err != nil || status.MIMEType != "application/json" {
		t.Fatalf("status: %v %+v", err, status)
	}
	var v coordination.StatusView
	if err := json.Unmarshal([]byte(status.Text), &v); err != nil || v.Result.Status != coordination.StatusFinished {
		t.Errorf("status resource: %v %s", err, status.Text)
	}

	events, err := readResource(t, c, "massgen://sessions/done/events")
	if err != nil {
		t.Fatal(err)
	}
	var evs struct {
		Events []coordination.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(events.Text), &evs); err != nil || len(evs.Events) < 3 || evs.Events[0].Type != "session_created" {
		t.Errorf("events: %v %s", err, events.Text)
	}

	label := res.Winner.Label
	answer, err := readResource(t, c, "massgen://sessions/done/answers/"+label)
	if err != nil || answer.Text != *res.FinalAnswer {
		t.Errorf("answer %s: %v %q, want the winning answer %q", label, err, answer.Text, *res.FinalAnswer)
	}

	// Errors are protocol errors that say what is wrong.
	if _, err := readResource(t, c, "massgen://sessions/nope/status"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := readResource(t, c, "massgen://sessions/done/answers/agent9.9"); err == nil || !strings.Contains(err.Error(), "agent9.9") {
		t.Errorf("unknown label: %v", err)
	}
}

func TestTeamRunPrompt(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	ctx := context.Background()
	list, err := c.ListPrompts(ctx, mcpgo.ListPromptsRequest{})
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != "team_run" {
		t.Fatalf("prompts/list: %v %+v", err, list)
	}
	var req mcpgo.GetPromptRequest
	req.Params.Name = "team_run"
	req.Params.Arguments = map[string]string{"task": "Design a cache key scheme."}
	res, err := c.GetPrompt(ctx, req)
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("prompts/get: %v %+v", err, res)
	}
	msg := res.Messages[0].Content.(mcpgo.TextContent).Text
	for _, want := range []string{"Design a cache key scheme.", "start_team", `["host","sim/strong","sim/strong"]`, "seen_steps", "vote_enum", "finalize_team"} {
		if !strings.Contains(msg, want) {
			t.Errorf("team_run prompt lacks %q:\n%s", want, msg)
		}
	}
	req.Params.Arguments = map[string]string{"task": "x", "models": "sim, sim/strong"}
	res, err = c.GetPrompt(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if msg := res.Messages[0].Content.(mcpgo.TextContent).Text; strings.Contains(msg, "host agent (you)") || !strings.Contains(msg, `["sim","sim/strong"]`) {
		t.Errorf("a team without host should not describe host steps:\n%s", msg)
	}
	req.Params.Arguments = map[string]string{}
	if _, err := c.GetPrompt(ctx, req); err == nil {
		t.Error("team_run without a task should fail")
	}
}
