package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// fuzzWait keeps blocking tools short under fuzzing; runs they start are
// cancelled after every input.
const fuzzWait = 20 * time.Millisecond

// FuzzToolArguments sends arbitrary arguments to every tool's handler. Each
// call must come back as a result — never a Go error or a panic — and a
// refusal must say what to fix.
func FuzzToolArguments(f *testing.F) {
	s := newMemServer(f, Options{WaitLimit: fuzzWait, Heartbeat: time.Hour})
	all := tools(s.handler)
	seeds := map[string][]string{
		"run_team":               {`{"task": "What is 2 + 2?", "models": ["sim", "sim"], "wait": false}`, `{"session_id": "x", "wait": true}`},
		"start_team":             {`{"task": "t", "models": ["sim", "host"], "rules": {"max_rounds": 2}}`, `{"task": "t", "agents": [{"id": "a", "model": "sim"}]}`},
		"step":                   {`{"session_id": "x", "agent_id": "agent_a"}`, `{"session_id": "x", "agent_id": "agent_a", "action": "vote", "target": "agent1", "reason": "r", "seen_steps": {"agent_a": 1}}`},
		"team_status":            {`{"session_id": "x", "format": "json"}`},
		"finalize_team":          {`{"session_id": "x", "final": "present"}`},
		"cancel_team":            {`{"session_id": "x"}`},
		"list_backends":          {`{}`},
		"generate_eval_criteria": {`{"task": "write a parser", "kind": "code", "count": 4, "model": "sim"}`},
		"checkpoint":             {`{"objective": "drop the table", "models": ["sim", "sim"]}`},
	}
	for i, st := range all {
		for _, s := range seeds[st.Tool.Name] {
			f.Add(uint8(i), []byte(s))
		}
		f.Add(uint8(i), []byte(`{"unknown": 1}`))
		f.Add(uint8(i), []byte(`[]`))
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		st := all[int(which)%len(all)]
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		defer s.Service().CancelAll()
		var req mcpgo.CallToolRequest
		req.Params.Name = st.Tool.Name
		req.Params.RawArguments = json.RawMessage(raw)
		res, err := st.Handler(ctx, req)
		if err != nil || res == nil {
			t.Fatalf("%s returned a Go error instead of a result: %v", st.Tool.Name, err)
		}
		if res.IsError && ctx.Err() == nil && !strings.Contains(text(res), "To fix:") {
			t.Fatalf("%s refused without saying what to fix: %s", st.Tool.Name, text(res))
		}
	})
}

// FuzzHTTPBody posts arbitrary bodies to /mcp. The server must answer every
// one without a panic or a 5xx.
func FuzzHTTPBody(f *testing.F) {
	s := newMemServer(f, Options{WaitLimit: fuzzWait, Heartbeat: time.Hour})
	h := s.HTTPHandler(HTTPOptions{})
	for _, seed := range []string{
		initializeBody,
		`{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`,
		`{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "team_status", "arguments": {"session_id": "x"}}}`,
		`[{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/initialized"}]`,
		`{"jsonrpc": "2.0", "id": null, "method": "resources/read", "params": {"uri": "massgen://sessions"}}`,
		`{"jsonrpc": "1.0"}`, `null`, ``, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		defer s.Service().CancelAll()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}
