package geminicli

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// Parser reads one `gemini --output-format stream-json` run
// (cliagent.Parser). It reports as it reads: the assistant's text deltas,
// and every tool call (the CLI's own tools and MCP tools, but the workflow
// server's) as a tool record when its result arrives.
type Parser struct {
	out     cliagent.Outcome
	session string                 // the CLI's session id (never resumed: see Outcome)
	notices []string               // error events ("Loop detected, stopping execution")
	pending map[string]pendingTool // tool_id → its tool_use
	// inCall says a model call's events are streaming: the first model
	// event after tool results (or the run's first) begins another.
	inCall bool
	now    func() time.Time
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
	Model     string          `json:"model"` // init: the model the run uses
	Role      string          `json:"role"`
	Content   string          `json:"content"`
	Delta     bool            `json:"delta"`
	ToolName  string          `json:"tool_name"`
	ToolID    string          `json:"tool_id"`
	Params    json.RawMessage `json:"parameters"`
	Status    string          `json:"status"`
	Output    *string         `json:"output"`
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

var errNotEvent = errors.New("not a gemini stream-json event")

// Line implements cliagent.Parser. Unknown event types are ignored.
func (p *Parser) Line(line []byte, ev cliagent.Events) error {
	var e event
	if err := json.Unmarshal(line, &e); err != nil || e.Type == "" {
		return errNotEvent
	}
	switch e.Type {
	case "init":
		p.session = e.SessionID
		// Prices the run when the agent was given no model (the CLI's
		// default), as Claude Code's messages' model does.
		p.out.Model = e.Model
	case "message":
		if e.Role != "assistant" {
			return nil
		}
		p.call(ev)
		if e.Delta {
			p.out.Final += e.Content
		} else {
			p.out.Final = e.Content
		}
		ev.Text(e.Content)
	case "tool_use":
		p.call(ev)
		// What the model wrote before a tool call was not its final reply.
		p.out.Final = ""
		if isWorkflow(e.ToolName) {
			return nil // the step's action, not a tool of the step
		}
		if p.pending == nil {
			p.pending = map[string]pendingTool{}
		}
		p.pending[e.ToolID] = pendingTool{name: e.ToolName, args: compact(e.Params), started: p.clock()}
	case "tool_result":
		// The CLI runs a response's tools once it has all of them; the
		// model's next event is its next call, which sends their results.
		p.inCall = false
		p.result(ev, e)
	case "error":
		if e.Message != "" {
			p.notices = append(p.notices, e.Message)
		}
	case "result":
		p.out.Done = true
		switch {
		case e.Error != nil && e.Error.Message != "":
			p.out.Error = e.Error.Message
		case e.Status != "success":
			p.out.Error = "the run ended with status " + e.Status
		}
		if st := e.Stats; st != nil {
			// The CLI counts the model's thoughts only in total_tokens;
			// providers.Usage counts them in output.
			p.out.Usage.Input = st.InputTokens
			p.out.Usage.CachedInput = st.Cached
			p.out.Usage.Reasoning = max(0, st.TotalTokens-st.InputTokens-st.OutputTokens)
			p.out.Usage.Output = st.OutputTokens + p.out.Usage.Reasoning
			// Gemini CLI reports usage only in its result.
			ev.Usage(p.out.Usage, cliagent.CacheWrites{}, p.out.Model)
		}
	}
	return nil
}

// call tells the events of a new model call apart (cliagent.Events.Call).
func (p *Parser) call(ev cliagent.Events) {
	if !p.inCall {
		p.inCall = true
		ev.Call()
	}
}

func (p *Parser) result(ev cliagent.Events, e event) {
	t, ok := p.pending[e.ToolID]
	if !ok {
		return // a workflow call's result, or a result without its call
	}
	delete(p.pending, e.ToolID)
	end := p.clock()
	rec := providers.ToolRecord{
		Kind: kindOf(t.name), Name: t.name, Arguments: t.args,
		IsError: e.Status != "success", Started: t.started, DurationMS: end.Sub(t.started).Milliseconds(),
	}
	if e.Output != nil {
		rec.ResultBytes = len(*e.Output)
	} else if e.Error != nil {
		rec.ResultBytes = len(e.Error.Message)
	}
	ev.Tool(rec)
}

func (p *Parser) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// codeIn finds the HTTP status in the API error the CLI quotes
// (`[API Error: {"error":{"code":429,…}}]`).
var codeIn = regexp.MustCompile(`"code":\s*(\d{3})\b`)

// Outcome implements cliagent.Parser. A run cut short (killed after its
// workflow call, or at the step timeout) has no result: its error, if any,
// is its last error event.
//
// It names no session, so every step starts a fresh one with the whole
// prompt: Gemini CLI 0.61 replays a resumed session's MCP tool result twice
// (two functionResponse parts for one call), which the Gemini API refuses.
func (p *Parser) Outcome() cliagent.Outcome {
	o := p.out
	if o.Error == "" && !o.Done && len(p.notices) > 0 {
		o.Error = p.notices[len(p.notices)-1]
	}
	if m := codeIn.FindStringSubmatch(o.Error); m != nil {
		o.Status, _ = strconv.Atoi(m[1])
	}
	return o
}

// isWorkflow tells the workflow server's tools (mcp_workflow_new_answer).
func isWorkflow(name string) bool { return strings.HasPrefix(name, "mcp_"+relay.ServerName+"_") }

// kindOf files the CLI's tools under a tools.jsonl kind: MCP tools
// (mcp_<server>_<tool>), file edits, shell commands, web search, the rest.
func kindOf(name string) string {
	switch {
	case strings.HasPrefix(name, "mcp_"):
		return "mcp"
	case name == "write_file" || name == "replace" || name == "edit":
		return "file_change"
	case name == "run_shell_command":
		return "command"
	case name == "google_web_search":
		return "web_search"
	}
	return "tool"
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil || b.String() == "null" {
		return nil
	}
	return b.Bytes()
}
