package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Stream reads one `codex exec --json` run, line by line. Its zero value is
// ready; Line feeds it one line of stdout. It reports as it reads: the
// agent's messages to req.StreamText, every file change, command, MCP call
// and web search to req.RecordTool (when an item completes, with the time it
// took since it started).
type Stream struct {
	// ThreadID is the thread to resume (`codex exec resume <id>`).
	ThreadID string
	// Final is the last agent message of the run: its final reply.
	Final string
	// Usage sums every turn.completed: input includes cached input and
	// output includes reasoning, as Codex reports them (and as
	// providers.Usage counts them). CostUSD stays nil: Codex gives no price.
	Usage providers.Usage
	// Failed is the message of turn.failed: the run ended without finishing
	// its turn (Codex exits 1 with it).
	Failed string
	// Notices are the non-fatal errors the run reported: a top-level error
	// event ("Reconnecting… 1/2") or an error item ("Model metadata for … not
	// found"); the last one explains a failure that has no message of its own.
	Notices []string
	// Completed tells whether a turn completed.
	Completed bool

	// Now is the clock of tool records (nil: time.Now).
	Now func() time.Time

	started map[string]time.Time // item id → when item.started arrived
}

// event is one line of the stream: the fields of every event type Codex
// writes, each read only for the types that carry it.
type event struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Message  string          `json:"message"`
	Item     json.RawMessage `json:"item"`
	Usage    *struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
		ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// item is a thread item: agent_message, reasoning, command_execution,
// file_change, mcp_tool_call, web_search, todo_list or error.
type item struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Message          string          `json:"message"`
	Status           string          `json:"status"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Changes          []change        `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            *struct {
		Message string `json:"message"`
	} `json:"error"`
	Query string `json:"query"`
}

type change struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // add, delete, update
}

// MalformedError is a stdout line that is not one of Codex's events.
type MalformedError struct {
	Line string // the line, cut to 200 bytes
	Err  error
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("codex printed a line that is not a JSON event (%v): %q", e.Err, e.Line)
}

func (e *MalformedError) Unwrap() error { return e.Err }

// Line reads one line of stdout. An empty line is skipped; a line that is
// not a JSON object is a *MalformedError, and the stream stays usable (the
// caller decides whether a run with such lines failed). Unknown event and
// item types are ignored: a newer Codex may add some.
func (s *Stream) Line(req *providers.Request, line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var ev event
	if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
		if err == nil {
			err = fmt.Errorf("no type")
		}
		return &MalformedError{Line: cut(string(line), 200), Err: err}
	}
	switch ev.Type {
	case "thread.started":
		s.ThreadID = ev.ThreadID
	case "turn.completed":
		s.Completed = true
		if u := ev.Usage; u != nil {
			s.Usage.Input += u.InputTokens
			s.Usage.CachedInput += u.CachedInputTokens
			s.Usage.Output += u.OutputTokens
			s.Usage.Reasoning += u.ReasoningOutputTokens
		}
	case "turn.failed":
		s.Failed = "the turn failed"
		if ev.Error != nil && ev.Error.Message != "" {
			s.Failed = ev.Error.Message
		}
	case "error":
		if ev.Message != "" {
			s.Notices = append(s.Notices, ev.Message)
		}
	case "item.started", "item.updated", "item.completed":
		var it item
		if err := json.Unmarshal(ev.Item, &it); err != nil {
			return &MalformedError{Line: cut(string(line), 200), Err: err}
		}
		s.item(req, ev.Type, it)
	}
	return nil
}

func (s *Stream) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Stream) item(req *providers.Request, evType string, it item) {
	if evType == "item.started" {
		if s.started == nil {
			s.started = map[string]time.Time{}
		}
		if _, seen := s.started[it.ID]; !seen {
			s.started[it.ID] = s.now()
		}
		return
	}
	if evType != "item.completed" {
		return
	}
	end := s.now()
	start, ok := s.started[it.ID]
	if !ok {
		start = end // completed without a start: it took no time we saw
	}
	delete(s.started, it.ID)
	rec := providers.ToolRecord{Started: start, DurationMS: end.Sub(start).Milliseconds()}
	switch it.Type {
	case "agent_message":
		s.Final = it.Text
		req.StreamText(it.Text)
	case "error":
		if it.Message != "" {
			s.Notices = append(s.Notices, it.Message)
		}
	case "file_change":
		for _, c := range it.Changes {
			r := rec
			r.Kind, r.Name = "file_change", c.Kind
			r.Arguments = mustJSON(map[string]string{"path": c.Path, "kind": c.Kind})
			r.IsError = it.Status == "failed"
			req.RecordTool(r)
		}
	case "command_execution":
		rec.Kind, rec.Name = "command", it.Command
		args := map[string]any{"command": it.Command}
		if it.ExitCode != nil {
			args["exit_code"] = *it.ExitCode
		}
		rec.Arguments = mustJSON(args)
		rec.ResultBytes = len(it.AggregatedOutput)
		rec.IsError = it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
		req.RecordTool(rec)
	case "mcp_tool_call":
		rec.Kind, rec.Name = "mcp", it.Server+"."+it.Tool
		rec.Arguments = compactOrNil(it.Arguments)
		if len(it.Result) > 0 && string(it.Result) != "null" {
			rec.ResultBytes = len(it.Result)
		}
		rec.IsError = it.Status == "failed" || (it.Error != nil && it.Error.Message != "")
		req.RecordTool(rec)
	case "web_search":
		rec.Kind, rec.Name = "web_search", "web_search"
		rec.Arguments = mustJSON(map[string]string{"query": it.Query})
		req.RecordTool(rec)
	}
}

// Err is the run's own account of why it failed: turn.failed's message,
// else the last notice; "" when the stream reports no failure.
func (s *Stream) Err() string {
	if s.Failed != "" {
		return s.Failed
	}
	if !s.Completed && len(s.Notices) > 0 {
		return s.Notices[len(s.Notices)-1]
	}
	return ""
}

// Class tells what kind of failure a message of Codex's describes, from the
// words it uses (Codex reports HTTP failures as text, without a status).
func Class(msg string) providers.Class {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "quota") || strings.Contains(m, "billing") || strings.Contains(m, "usage limit"):
		return providers.ClassQuota
	case strings.Contains(m, "401") || strings.Contains(m, "unauthorized") || strings.Contains(m, "api key") ||
		strings.Contains(m, "not logged in") || strings.Contains(m, "login") || strings.Contains(m, "authenticat"):
		return providers.ClassAuth
	case strings.Contains(m, "429") || strings.Contains(m, "rate limit"):
		return providers.ClassRateLimit
	case strings.Contains(m, "high demand") || strings.Contains(m, "overloaded") || strings.Contains(m, "503") ||
		strings.Contains(m, "capacity"):
		return providers.ClassOverloaded
	case strings.Contains(m, "timeout") || strings.Contains(m, "timed out"):
		return providers.ClassTimeout
	}
	return providers.ClassProvider
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func compactOrNil(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil || b.String() == "null" {
		return nil
	}
	return b.Bytes()
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
