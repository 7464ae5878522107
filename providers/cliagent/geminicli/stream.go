package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Stream reads one `gemini --output-format stream-json` run, line by line.
// Its zero value is ready; Line feeds it one line of stdout. It reports as it
// reads: the assistant's text deltas to req.StreamText, every tool call (the
// CLI's own tools and MCP tools) to req.RecordTool when its result arrives.
type Stream struct {
	// SessionID is the session to resume (`--resume <id>`).
	SessionID string
	// Model is the model the CLI says it runs.
	Model string
	// Final is the assistant's text after its last tool call: its final
	// reply.
	Final string
	// Usage is the result's stats: input includes cached input; output
	// includes the model's thoughts, which the CLI counts only in
	// total_tokens (reasoning = total - input - output). CostUSD stays nil:
	// the CLI gives no price.
	Usage providers.Usage
	// Status is the result's status ("success", "error"); "" until the
	// result line arrives.
	Status string
	// Failed is the result's error message when its status is not success.
	Failed string
	// Notices are the error events of the run ("Loop detected, stopping
	// execution" is a warning), oldest first.
	Notices []string

	// Now is the clock of tool records (nil: time.Now).
	Now func() time.Time

	pending map[string]pendingTool // tool_id → its tool_use
	order   []string               // tool ids in arrival order, for results that never come
}

type pendingTool struct {
	name    string
	args    json.RawMessage
	started time.Time
}

// event is one line of the stream, every type's fields together.
type event struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	Model     string          `json:"model"`
	Role      string          `json:"role"`
	Content   string          `json:"content"`
	Delta     bool            `json:"delta"`
	ToolName  string          `json:"tool_name"`
	ToolID    string          `json:"tool_id"`
	Params    json.RawMessage `json:"parameters"`
	Status    string          `json:"status"`
	Output    *string         `json:"output"`
	Severity  string          `json:"severity"`
	Message   string          `json:"message"`
	Error     *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		TotalTokens  int64 `json:"total_tokens"`
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
	} `json:"stats"`
}

// MalformedError is a stdout line that is not one of the CLI's events.
type MalformedError struct {
	Line string // the line, cut to 200 bytes
	Err  error
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("gemini printed a line that is not a JSON event (%v): %q", e.Err, e.Line)
}

func (e *MalformedError) Unwrap() error { return e.Err }

// Line reads one line of stdout. An empty line is skipped; a line that is
// not a JSON event is a *MalformedError and the stream stays usable. Unknown
// event types are ignored.
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
	case "init":
		s.SessionID, s.Model = ev.SessionID, ev.Model
	case "message":
		if ev.Role != "assistant" {
			return nil
		}
		if ev.Delta {
			s.Final += ev.Content
		} else {
			s.Final = ev.Content
		}
		req.StreamText(ev.Content)
	case "tool_use":
		// What the model wrote before a tool call was not its final reply.
		s.Final = ""
		if s.pending == nil {
			s.pending = map[string]pendingTool{}
		}
		s.pending[ev.ToolID] = pendingTool{name: ev.ToolName, args: compactOrNil(ev.Params), started: s.now()}
		s.order = append(s.order, ev.ToolID)
	case "tool_result":
		s.result(req, ev)
	case "error":
		if ev.Message != "" {
			s.Notices = append(s.Notices, ev.Message)
		}
	case "result":
		s.Status = ev.Status
		if ev.Error != nil && ev.Error.Message != "" {
			s.Failed = ev.Error.Message
		} else if ev.Status != "success" {
			s.Failed = "the run ended with status " + ev.Status
		}
		if st := ev.Stats; st != nil {
			s.Usage.Input = st.InputTokens
			s.Usage.CachedInput = st.Cached
			s.Usage.Reasoning = max(0, st.TotalTokens-st.InputTokens-st.OutputTokens)
			s.Usage.Output = st.OutputTokens + s.Usage.Reasoning
		}
	}
	return nil
}

func (s *Stream) result(req *providers.Request, ev event) {
	p, ok := s.pending[ev.ToolID]
	end := s.now()
	if !ok {
		p = pendingTool{name: toolName(ev.ToolID), started: end}
	}
	delete(s.pending, ev.ToolID)
	rec := providers.ToolRecord{
		Kind: kindOf(p.name), Name: p.name, Arguments: p.args,
		IsError: ev.Status != "success", Started: p.started, DurationMS: end.Sub(p.started).Milliseconds(),
	}
	if ev.Output != nil {
		rec.ResultBytes = len(*ev.Output)
	} else if ev.Error != nil {
		rec.ResultBytes = len(ev.Error.Message)
	}
	req.RecordTool(rec)
}

// Close reports the tool calls that never got a result (the run was cut
// short) as failed records.
func (s *Stream) Close(req *providers.Request) {
	end := s.now()
	for _, id := range s.order {
		p, ok := s.pending[id]
		if !ok {
			continue
		}
		req.RecordTool(providers.ToolRecord{Kind: kindOf(p.name), Name: p.name, Arguments: p.args, IsError: true,
			Started: p.started, DurationMS: end.Sub(p.started).Milliseconds()})
	}
	s.pending, s.order = nil, nil
}

// kindOf sorts the CLI's tools as tools.jsonl records them: MCP tools
// (mcp_<server>_<tool>), file edits, shell commands, web search, the rest.
func kindOf(name string) string {
	switch {
	case strings.HasPrefix(name, "mcp_"):
		return "mcp"
	case name == "write_file" || name == "replace" || name == "edit":
		return "file_change"
	case name == "run_shell_command":
		return "command"
	case name == "google_web_search" || name == "web_fetch":
		return "web_search"
	}
	return "tool"
}

// toolName recovers a tool's name from its id (`<name>__<name>_<ms>_<n>`)
// when the tool_use line was never seen.
func toolName(id string) string {
	name, _, _ := strings.Cut(id, "__")
	return name
}

func (s *Stream) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Err is the run's own account of why it failed: the result's error, else,
// with no result at all, the last notice; "" when it reports no failure.
func (s *Stream) Err() string {
	if s.Failed != "" {
		return s.Failed
	}
	if s.Status == "" && len(s.Notices) > 0 {
		return s.Notices[len(s.Notices)-1]
	}
	return ""
}

// Class tells what kind of failure a message of the CLI's describes. The
// CLI quotes the API's error body ("[API Error: {… "code":500 …}]"), so the
// status and Google's status names are in the text.
func Class(msg string) providers.Class {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "quota") && (strings.Contains(m, "per day") || strings.Contains(m, "perday") || strings.Contains(m, "billing")):
		return providers.ClassQuota
	case strings.Contains(m, "api key not valid") || strings.Contains(m, "api_key_invalid") || strings.Contains(m, "unauthenticated") ||
		strings.Contains(m, "permission_denied") || strings.Contains(m, `"code":401`) || strings.Contains(m, `"code":403`) ||
		strings.Contains(m, "login") || strings.Contains(m, "authenticat"):
		return providers.ClassAuth
	case strings.Contains(m, "resource_exhausted") || strings.Contains(m, `"code":429`) || strings.Contains(m, "rate limit"):
		return providers.ClassRateLimit
	case strings.Contains(m, "unavailable") || strings.Contains(m, "overloaded") || strings.Contains(m, `"code":503`):
		return providers.ClassOverloaded
	case strings.Contains(m, "deadline_exceeded") || strings.Contains(m, "timed out") || strings.Contains(m, "timeout"):
		return providers.ClassTimeout
	}
	return providers.ClassProvider
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
