package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Resources are read-only views of sessions: reading one never decides or
// writes anything (team_status, a tool, is the call that may decide).
const (
	sessionsURI       = "massgen://sessions"
	statusTemplate    = "massgen://sessions/{id}/status"
	eventsTemplate    = "massgen://sessions/{id}/events"
	answersTemplate   = "massgen://sessions/{id}/answers/{label}"
	jsonMIME          = "application/json"
	answerContentMIME = "text/markdown"
)

func resources(e *env) []server.ServerResource {
	return []server.ServerResource{{
		Resource: mcpgo.NewResource(sessionsURI, "sessions",
			mcpgo.WithResourceDescription("Every session in this server's state directory with its status, driver, agents, next agents and winner, oldest first."),
			mcpgo.WithMIMEType(jsonMIME)),
		Handler: e.readSessions,
	}}
}

func resourceTemplates(e *env) []server.ServerResourceTemplate {
	return []server.ServerResourceTemplate{
		{
			Template: mcpgo.NewResourceTemplate(statusTemplate, "session status",
				mcpgo.WithTemplateDescription("A session's status, as team_status returns it (read only: reading never decides the session)."),
				mcpgo.WithTemplateMIMEType(jsonMIME)),
			Handler: e.readStatus,
		},
		{
			Template: mcpgo.NewResourceTemplate(eventsTemplate, "session events",
				mcpgo.WithTemplateDescription("A session's whole timeline (events.jsonl): created, steps started and landed, re-votes, decisions, cancellations."),
				mcpgo.WithTemplateMIMEType(jsonMIME)),
			Handler: e.readEvents,
		},
		{
			Template: mcpgo.NewResourceTemplate(answersTemplate, "answer",
				mcpgo.WithTemplateDescription("The full text of one answer by its label (agentN.k), latest or not: follow a vote's target_label to what the voter saw."),
				mcpgo.WithTemplateMIMEType(answerContentMIME)),
			Handler: e.readAnswer,
		},
	}
}

func (e *env) readSessions(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	list, err := e.svc(ctx).Sessions(ctx)
	if err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, map[string]any{"sessions": list})
}

func (e *env) readStatus(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	v, err := e.svc(ctx).Inspect(ctx, templateArg(req, "id"))
	if err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, v)
}

func (e *env) readEvents(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	evs, err := e.svc(ctx).Events(ctx, templateArg(req, "id"))
	if err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, map[string]any{"events": evs})
}

func (e *env) readAnswer(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	a, err := e.svc(ctx).Answer(ctx, templateArg(req, "id"), templateArg(req, "label"))
	if err != nil {
		return nil, err
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: answerContentMIME, Text: a.Content}}, nil
}

// templateArg is a variable matched from a resource template.
func templateArg(req mcpgo.ReadResourceRequest, name string) string {
	switch v := req.Params.Arguments[name].(type) {
	case string:
		return v
	case []string:
		if len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func jsonContents(uri string, v any) ([]mcpgo.ResourceContents, error) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cannot encode %s: %w", uri, err)
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: uri, MIMEType: jsonMIME, Text: string(body)}}, nil
}
