package codex

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

// Parser reads one `codex exec --json` run (cliagent.Parser). It reports as
// it reads: the agent's messages as text, every file change, command, MCP
// call (but the workflow server's) and web search as a tool record when its
// item completes, with the time it took since it started; a reconnect as a
// retry.
type Parser struct {
	out      cliagent.Outcome
	notices  []string             // non-fatal errors: reconnects, error items
	started  map[string]time.Time // item id → when item.started arrived
	finished bool                 // turn.completed or turn.failed seen
	now      func() time.Time
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

var errNotEvent = errors.New("not a codex exec --json event")

// Line implements cliagent.Parser. Unknown event and item types are
// ignored: a newer Codex may add some.
func (p *Parser) Line(line []byte, ev cliagent.Events) error {
	var e event
	if err := json.Unmarshal(line, &e); err != nil || e.Type == "" {
		return errNotEvent
	}
	switch e.Type {
	case "thread.started":
		p.out.SessionID = e.ThreadID
	case "turn.completed":
		p.finished = true
		if u := e.Usage; u != nil {
			// Codex reports input with its cached part and output with its
			// reasoning part, as providers.Usage counts them.
			p.out.Usage.Input += u.InputTokens
			p.out.Usage.CachedInput += u.CachedInputTokens
			p.out.Usage.Output += u.OutputTokens
			p.out.Usage.Reasoning += u.ReasoningOutputTokens
			// codex exec reports usage only when its turn ends.
			ev.Usage(p.out.Usage, cliagent.CacheWrites{}, "")
		}
	case "turn.failed":
		p.finished = true
		p.out.Error = "the turn failed"
		if e.Error != nil && e.Error.Message != "" {
			p.out.Error = e.Error.Message
		}
	case "error":
		// "Reconnecting… 1/2": Codex retries its API itself.
		if e.Message != "" {
			p.notices = append(p.notices, e.Message)
			ev.Retry(0, errors.New("codex: "+e.Message))
		}
	case "item.started", "item.updated", "item.completed":
		var it item
		if err := json.Unmarshal(e.Item, &it); err != nil {
			return errNotEvent
		}
		p.item(ev, e.Type, it)
	}
	return nil
}

func (p *Parser) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

func (p *Parser) item(ev cliagent.Events, evType string, it item) {
	if evType == "item.started" {
		if p.started == nil {
			p.started = map[string]time.Time{}
		}
		if _, seen := p.started[it.ID]; !seen {
			p.started[it.ID] = p.clock()
		}
		return
	}
	if evType != "item.completed" {
		return
	}
	end := p.clock()
	start, ok := p.started[it.ID]
	if !ok {
		start = end // completed without a start: it took no time we saw
	}
	delete(p.started, it.ID)
	rec := providers.ToolRecord{Started: start, DurationMS: end.Sub(start).Milliseconds()}
	switch it.Type {
	case "agent_message":
		p.out.Final = it.Text
		ev.Text(it.Text)
	case "error":
		if it.Message != "" {
			p.notices = append(p.notices, it.Message)
		}
	case "file_change":
		for _, c := range it.Changes {
			r := rec
			r.Kind, r.Name = "file_change", c.Kind
			r.Arguments = mustJSON(map[string]string{"path": c.Path, "kind": c.Kind})
			r.IsError = it.Status == "failed"
			ev.Tool(r)
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
		ev.Tool(rec)
	case "mcp_tool_call":
		if it.Server == relay.ServerName {
			return // the step's action, not a tool of the step
		}
		rec.Kind, rec.Name = "mcp", it.Server+"."+it.Tool
		rec.Arguments = compact(it.Arguments)
		if len(it.Result) > 0 && string(it.Result) != "null" {
			rec.ResultBytes = len(it.Result)
		}
		rec.IsError = it.Status == "failed" || (it.Error != nil && it.Error.Message != "")
		ev.Tool(rec)
	case "web_search":
		rec.Kind, rec.Name = "web_search", "web_search"
		rec.Arguments = mustJSON(map[string]string{"query": it.Query})
		ev.Tool(rec)
	}
}

// statusIn finds the HTTP status Codex quotes in an error ("unexpected
// status 401 Unauthorized", "last status: 429 Too Many Requests").
var statusIn = regexp.MustCompile(`status:? (\d{3})\b`)

// Outcome implements cliagent.Parser. A run that ended without finishing
// its turn (killed after its workflow call, or at the step timeout) is not
// Done; its error, when it has no turn.failed, is the last notice it gave.
func (p *Parser) Outcome() cliagent.Outcome {
	o := p.out
	o.Done = p.finished
	if o.Error == "" && !o.Done && len(p.notices) > 0 {
		o.Error = p.notices[len(p.notices)-1]
	}
	if m := statusIn.FindStringSubmatch(strings.ToLower(o.Error)); m != nil {
		o.Status, _ = strconv.Atoi(m[1])
	}
	return o
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil || b.String() == "null" {
		return nil
	}
	return b.Bytes()
}
