package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/tidwall/gjson"
)

// The tasks extension on the wire (tasks.go says why it is here and not in
// mcp-go): the transports hand every incoming message to taskMethod first,
// and every outgoing one through liftTask.

// missingCapability is the extension's code for a client that did not
// declare what a request needs (-32021).
const missingCapability = -32021

// taskMethod answers tasks/get, tasks/update and tasks/cancel of a request
// that carries per-request capabilities (2026-07-28); ok is false for any
// other message, which goes to mcp-go as before (a legacy client's tasks/*
// included). reply is nil for a notification.
func (s *Server) taskMethod(ctx context.Context, msg []byte) (reply []byte, ok bool) {
	method := gjson.GetBytes(msg, "method").String()
	if method != "tasks/get" && method != "tasks/update" && method != "tasks/cancel" {
		return nil, false
	}
	caps := gjson.GetBytes(msg, `params._meta.io\.modelcontextprotocol/clientCapabilities`)
	if !caps.Exists() {
		return nil, false
	}
	id := gjson.GetBytes(msg, "id")
	if !id.Exists() || (id.Type != gjson.Number && id.Type != gjson.String) {
		return nil, true
	}
	rpcID := json.RawMessage(id.Raw)
	if !caps.Get(`extensions.io\.modelcontextprotocol/tasks`).Exists() {
		return rpcError(rpcID, missingCapability, "Missing required client capability: declare the extension "+extTasks+" in the request's _meta clientCapabilities.extensions",
			map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{extTasks: map[string]any{}}}}), true
	}
	taskID := gjson.GetBytes(msg, "params.taskId").String()
	switch method {
	case "tasks/get":
		t, err := s.handler.task(ctx, taskID)
		if errors.Is(err, errTaskNotFound) {
			return rpcError(rpcID, mcpgo.INVALID_PARAMS, "Failed to retrieve task: "+err.Error()+"; a task is read from its session, and no session of yours matches its id", nil), true
		}
		if err != nil {
			return rpcError(rpcID, mcpgo.INTERNAL_ERROR, "Failed to retrieve task: "+s.handler.shownError(ctx, err).Error(), nil), true
		}
		return rpcResult(rpcID, t), true
	case "tasks/update":
		// run_team's tasks never ask for input (a team with human agents
		// is not made a task), so there is nothing outstanding to answer:
		// the extension says to ignore such responses.
		if _, err := s.handler.task(ctx, taskID); err != nil {
			return rpcError(rpcID, taskErrorCode(err), "Failed to update task: "+s.handler.shownError(ctx, err).Error(), nil), true
		}
	default:
		if err := s.handler.cancelTask(ctx, taskID); err != nil {
			return rpcError(rpcID, taskErrorCode(err), "Failed to cancel task: "+s.handler.shownError(ctx, err).Error(), nil), true
		}
	}
	return rpcResult(rpcID, map[string]string{"resultType": string(mcpgo.ResultTypeComplete)}), true
}

func rpcResult(id json.RawMessage, result any) []byte {
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return out
}

func rpcError(id json.RawMessage, code int, msg string, data any) []byte {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return out
}

// taskMarker is how a task handle's result starts to look once mcp-go has
// written it: a cheap test before any parsing.
var taskMarker = []byte(`"resultType":"task"`)

// liftTask rewrites one outgoing message (a JSON line, or an SSE event
// whose data is one) whose result is a task handle into the extension's
// CreateTaskResult: the handle's fields at the result's top level, beside
// resultType and _meta, and no content. Anything else passes unchanged.
func liftTask(p []byte) []byte {
	if !bytes.Contains(p, taskMarker) {
		return p
	}
	start, end := bytes.IndexByte(p, '{'), bytes.LastIndexByte(p, '}')
	if start < 0 || end < start {
		return p
	}
	msg := p[start : end+1]
	if gjson.GetBytes(msg, "result.resultType").String() != string(resultTypeTask) {
		return p
	}
	handle := gjson.GetBytes(msg, "result.structuredContent")
	if !handle.IsObject() {
		return p
	}
	result := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(handle.Raw), &result); err != nil {
		return p
	}
	result["resultType"] = json.RawMessage(`"task"`)
	if meta := gjson.GetBytes(msg, "result._meta"); meta.Exists() {
		result["_meta"] = json.RawMessage(meta.Raw)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(msg, &env); err != nil {
		return p
	}
	var err error
	if env["result"], err = json.Marshal(result); err != nil {
		return p
	}
	lifted, err := json.Marshal(env)
	if err != nil {
		return p
	}
	out := make([]byte, 0, len(p)+len(lifted)-len(msg))
	out = append(append(append(out, p[:start]...), lifted...), p[end+1:]...)
	return out
}

// liftingWriter passes each message written through liftTask. mcp-go
// writes a message in one Write (stdio's line, HTTP's JSON body or SSE
// event), so a message is never split across two.
type liftingWriter struct{ w io.Writer }

func (l liftingWriter) Write(p []byte) (int, error) {
	if _, err := l.w.Write(liftTask(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// liftingResponseWriter is liftingWriter for an HTTP response; it keeps
// Flush for SSE.
type liftingResponseWriter struct{ http.ResponseWriter }

func (w liftingResponseWriter) Write(p []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(liftTask(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w liftingResponseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w liftingResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// taskRoutes answers the extension's methods over HTTP before mcp-go sees
// them, and lifts task handles out of what it answers.
func (s *Server) taskRoutes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if reply, ok := s.taskMethod(r.Context(), bodyOf(r.Context())); ok {
				if reply == nil {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(append(reply, '\n'))
				return
			}
		}
		next.ServeHTTP(liftingResponseWriter{w}, r)
	})
}

// taskErrorCode is a tasks/* error's JSON-RPC code: invalid params for a
// task id that names nothing of the caller's, an internal error for
// anything else (a store that could not be reached, say).
func taskErrorCode(err error) int {
	if errors.Is(err, errTaskNotFound) {
		return mcpgo.INVALID_PARAMS
	}
	return mcpgo.INTERNAL_ERROR
}
