package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"path/filepath"
	"unicode/utf8"

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
	finalTemplate     = "massgen://sessions/{id}/final_answer"
	filesTemplate     = "massgen://sessions/{id}/files/{label}"
	fileTemplate      = "massgen://sessions/{id}/files/{label}/{+path}"
	jsonMIME          = "application/json"
	answerContentMIME = "text/markdown"
)

func resources(h *handler) []server.ServerResource {
	return []server.ServerResource{{
		Resource: mcpgo.NewResource(sessionsURI, "sessions",
			mcpgo.WithResourceDescription("Every session in this server's state directory with its status, driver, agents, next agents and winner, oldest first."),
			mcpgo.WithMIMEType(jsonMIME)),
		Handler: h.readSessions,
	}}
}

func resourceTemplates(h *handler) []server.ServerResourceTemplate {
	return []server.ServerResourceTemplate{
		{
			Template: mcpgo.NewResourceTemplate(statusTemplate, "session status",
				mcpgo.WithTemplateDescription("A session's status, as team_status returns it (read only: reading never decides the session)."),
				mcpgo.WithTemplateMIMEType(jsonMIME)),
			Handler: h.readStatus,
		},
		{
			Template: mcpgo.NewResourceTemplate(eventsTemplate, "session events",
				mcpgo.WithTemplateDescription("A session's whole timeline (events.jsonl): created, steps started and landed, re-votes, decisions, cancellations."),
				mcpgo.WithTemplateMIMEType(jsonMIME)),
			Handler: h.readEvents,
		},
		{
			Template: mcpgo.NewResourceTemplate(answersTemplate, "answer",
				mcpgo.WithTemplateDescription("The full text of one answer by its label (agentN.k), latest or not: follow a vote's target_label to what the voter saw."),
				mcpgo.WithTemplateMIMEType(answerContentMIME)),
			Handler: h.readAnswer,
		},
		{
			Template: mcpgo.NewResourceTemplate(finalTemplate, "final answer",
				mcpgo.WithTemplateDescription("The final answer in full, which a brief result cuts (also when final present or synthesize wrote a new one)."),
				mcpgo.WithTemplateMIMEType(answerContentMIME)),
			Handler: h.readFinal,
		},
		{
			Template: mcpgo.NewResourceTemplate(filesTemplate, "answer files",
				mcpgo.WithTemplateDescription("The files an answer delivered (agentN.k): its workspace snapshot's paths, sizes and SHA-256, and the directory that holds them."),
				mcpgo.WithTemplateMIMEType(jsonMIME)),
			Handler: h.readFiles,
		},
		{
			Template: mcpgo.NewResourceTemplate(fileTemplate, "answer file",
				mcpgo.WithTemplateDescription("One file of an answer's snapshot, by its path in the workspace: text as is, anything else base64."),
			),
			Handler: h.readFiles,
		},
		appResourceTemplate(h),
	}
}

// readFiles serves an answer's snapshot: its listing, or one file.
func (h *handler) readFiles(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	f, err := h.svc(ctx).AnswerFiles(ctx, templateArg(req, "id"), templateArg(req, "label"), templateArg(req, "path"))
	if err != nil {
		return nil, h.shownError(ctx, err)
	}
	if f.Path == "" {
		return jsonContents(req.Params.URI, f)
	}
	kind := mimeOf(f.Path)
	if utf8.Valid(f.Content) {
		return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: kind, Text: string(f.Content)}}, nil
	}
	return []mcpgo.ResourceContents{mcpgo.BlobResourceContents{URI: req.Params.URI, MIMEType: kind, Blob: base64.StdEncoding.EncodeToString(f.Content)}}, nil
}

// mimeOf guesses a file's type from its extension (text/plain for text
// without a known one).
func mimeOf(path string) string {
	if t := mime.TypeByExtension(filepath.Ext(path)); t != "" {
		return t
	}
	return "text/plain; charset=utf-8"
}

func (h *handler) readSessions(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	list, err := h.svc(ctx).Sessions(ctx)
	if err != nil {
		return nil, h.shownError(ctx, err)
	}
	return jsonContents(req.Params.URI, map[string]any{"sessions": list})
}

func (h *handler) readStatus(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	v, err := h.svc(ctx).Inspect(ctx, templateArg(req, "id"))
	if err != nil {
		return nil, bounded(h.shownError(ctx, err))
	}
	return jsonContents(req.Params.URI, v)
}

func (h *handler) readEvents(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	evs, err := h.svc(ctx).Events(ctx, templateArg(req, "id"))
	if err != nil {
		return nil, bounded(h.shownError(ctx, err))
	}
	return jsonContents(req.Params.URI, map[string]any{"events": evs})
}

func (h *handler) readAnswer(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	a, err := h.svc(ctx).Answer(ctx, templateArg(req, "id"), templateArg(req, "label"))
	if err != nil {
		return nil, bounded(h.shownError(ctx, err))
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: answerContentMIME, Text: a.Content}}, nil
}

// readFinal serves a session's final answer whole, read only (Inspect:
// reading never decides the session).
func (h *handler) readFinal(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	id := templateArg(req, "id")
	v, err := h.svc(ctx).Inspect(ctx, id)
	if err != nil {
		return nil, bounded(h.shownError(ctx, err))
	}
	if v.Result.FinalAnswer == nil {
		return nil, bounded(fmt.Errorf("session %s has no final answer yet (status %s); its answers so far are at massgen://sessions/%s/answers/<label>", id, v.Result.Status, id))
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: answerContentMIME, Text: *v.Result.FinalAnswer}}, nil
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

// boundedError is an error whose message repeats at most a little of what
// the caller sent (boundEcho); errors.Is still sees the cause.
type boundedError struct{ err error }

func (b boundedError) Error() string { return boundEcho(b.err.Error()) }
func (b boundedError) Unwrap() error { return b.err }

func bounded(err error) error { return boundedError{err} }
