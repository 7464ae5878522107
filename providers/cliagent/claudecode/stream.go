package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// Parser reads Claude Code's stream-json output (one run).
type Parser struct {
	out cliagent.Outcome
	// usage per message id: Claude Code prints one assistant line per
	// content block, each repeating its message's usage.
	msgUsage map[string]usage
	msgOrder []string
	// called holds the ids of the messages told as model calls (Call):
	// one call's content blocks come on several lines.
	called  map[string]bool
	pending map[string]pendingTool
	text    strings.Builder // the assistant's text, for a run without a result
	now     func() time.Time
}

type pendingTool struct {
	rec providers.ToolRecord
}

// event is the part of a stream-json line the parser reads.
type event struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// system/init
	APIKeySource string `json:"apiKeySource"`
	// system/api_retry
	Attempt      int     `json:"attempt"`
	RetryDelayMS float64 `json:"retry_delay_ms"`
	ErrorStatus  int     `json:"error_status"`
	Error        any     `json:"error"`
	// assistant / user
	Message *message `json:"message"`
	// result
	IsError        bool     `json:"is_error"`
	Result         *string  `json:"result"`
	TotalCostUSD   *float64 `json:"total_cost_usd"`
	Usage          *usage   `json:"usage"`
	APIErrorStatus *int     `json:"api_error_status"`
	Errors         []string `json:"errors"`
}

type message struct {
	ID      string  `json:"id"`
	Model   string  `json:"model"`
	Role    string  `json:"role"`
	Content []block `json:"content"`
	Usage   *usage  `json:"usage"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type usage struct {
	Input      int64 `json:"input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	Output     int64 `json:"output_tokens"`
	// CacheCreation splits CacheWrite by how long the cache keeps it,
	// billed at different prices.
	CacheCreation *struct {
		FiveMin int64 `json:"ephemeral_5m_input_tokens"`
		OneHour int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// normalised is Anthropic usage in providers' terms: input counts every
// input token, cached or written to the cache (as the anthropic adapter).
func (u usage) normalised() providers.Usage {
	return providers.Usage{Input: u.Input + u.CacheRead + u.CacheWrite, CachedInput: u.CacheRead, Output: u.Output}
}

// writes is the part of the input written to the cache, for the price
// table: what the API does not say was kept an hour was kept 5 minutes,
// its default (as the anthropic adapter prices it).
func (u usage) writes() cliagent.CacheWrites {
	var hour int64
	if u.CacheCreation != nil {
		hour = min(u.CacheCreation.OneHour, u.CacheWrite)
	}
	return cliagent.CacheWrites{FiveMin: u.CacheWrite - hour, OneHour: hour}
}

func (p *Parser) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// Line implements cliagent.Parser.
func (p *Parser) Line(line []byte, ev cliagent.Events) error {
	var e event
	if err := json.Unmarshal(line, &e); err != nil || e.Type == "" {
		return errors.New("not a stream-json event")
	}
	if e.SessionID != "" {
		p.out.SessionID = e.SessionID
	}
	switch e.Type {
	case "system":
		switch e.Subtype {
		case "init":
			p.out.Subscription = subscription(e.APIKeySource)
		case "api_retry":
			ev.Retry(time.Duration(e.RetryDelayMS*float64(time.Millisecond)),
				fmt.Errorf("an API call of Claude Code failed (HTTP %d, %s); attempt %d", e.ErrorStatus, errorText(e.Error), e.Attempt))
		}
	case "assistant":
		p.assistant(e.Message, ev)
	case "user":
		p.user(e.Message, ev)
	case "result":
		p.result(e)
		ev.Usage(p.out.Usage, p.out.CacheWrites, p.out.Model)
	}
	return nil
}

// subscription tells a login (Claude.ai Pro/Max) from an API key: its cost
// figure is then computed at list prices, not charged.
func subscription(source string) bool {
	switch source {
	case "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "apiKeyHelper", "":
		return false
	}
	return true
}

// synthetic is the model Claude Code names on a message it writes itself,
// not a model: the API error it gave up on ("API Error: 500 …"), which its
// result reports again. Its text is not streamed as the model's, so no
// estimate of the run's output counts it; its usage (zeros) is no model
// call's, and its name, which has no price, never replaces the model the
// run is priced by: a cost check under it would not bind.
const synthetic = "<synthetic>"

func (p *Parser) assistant(m *message, ev cliagent.Events) {
	if m == nil {
		return
	}
	byModel := m.Model != synthetic
	if byModel && m.Model != "" {
		// The last real model named prices the run when the agent was
		// given none; a <synthetic> message never renames it.
		p.out.Model = m.Model
	}
	if m.ID != "" && byModel && !p.called[m.ID] {
		if p.called == nil {
			p.called = map[string]bool{}
		}
		p.called[m.ID] = true
		ev.Call()
	}
	if m.Usage != nil && m.ID != "" && byModel {
		if p.msgUsage == nil {
			p.msgUsage = map[string]usage{}
		}
		if _, seen := p.msgUsage[m.ID]; !seen {
			p.msgOrder = append(p.msgOrder, m.ID)
		}
		p.msgUsage[m.ID] = *m.Usage
		// Each model call's usage as it arrives, so the step's limits bind
		// within a turn rather than at the run's end.
		u, w := p.messagesUsage()
		ev.Usage(u, w, p.out.Model)
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				if p.text.Len() > 0 {
					p.text.WriteString("\n")
				}
				p.text.WriteString(b.Text)
				if byModel {
					ev.Text(b.Text)
				}
			}
		case "tool_use":
			if isWorkflow(b.Name) {
				continue // the step's action, not a tool of the step
			}
			if p.pending == nil {
				p.pending = map[string]pendingTool{}
			}
			p.pending[b.ID] = pendingTool{rec: providers.ToolRecord{
				Kind: kindOf(b.Name), Name: b.Name, Arguments: compact(b.Input), Started: p.clock(), CallID: b.ID,
			}}
		}
	}
}

func (p *Parser) user(m *message, ev cliagent.Events) {
	if m == nil {
		return
	}
	for _, b := range m.Content {
		if b.Type != "tool_result" {
			continue
		}
		pt, ok := p.pending[b.ToolUseID]
		if !ok {
			continue
		}
		delete(p.pending, b.ToolUseID)
		rec := pt.rec
		rec.ResultBytes = len(resultText(b.Content))
		rec.IsError = b.IsError
		rec.DurationMS = p.clock().Sub(rec.Started).Milliseconds()
		ev.Tool(rec)
	}
}

func (p *Parser) result(e event) {
	p.out.Done = true
	if e.Result != nil {
		p.out.Final = *e.Result
	}
	if e.Usage != nil {
		p.out.Usage, p.out.CacheWrites = e.Usage.normalised(), e.Usage.writes()
	}
	if e.TotalCostUSD != nil {
		c := *e.TotalCostUSD
		p.out.Usage.CostUSD = &c
	}
	// On an API error Claude Code still says subtype "success": is_error
	// is what tells.
	if e.IsError || (e.Subtype != "" && e.Subtype != "success") {
		msg := strings.TrimSpace(p.out.Final)
		if msg == "" && len(e.Errors) > 0 {
			msg = strings.Join(e.Errors, "; ")
		}
		if msg == "" {
			msg = "Claude Code reported an error (" + e.Subtype + ")"
		}
		p.out.Error = msg
		if e.APIErrorStatus != nil {
			p.out.Status = *e.APIErrorStatus
		}
	}
}

// Outcome implements cliagent.Parser. A run cut short (killed after its
// workflow call, or at the step timeout) has no result event: its usage is
// the sum of its messages' and its final text what it wrote.
func (p *Parser) Outcome() cliagent.Outcome {
	o := p.out
	if !o.Done {
		o.Usage, o.CacheWrites = p.messagesUsage()
		o.Final = p.text.String()
	}
	return o
}

// messagesUsage is the sum of the messages' usage so far, unpriced, and of
// their cache writes, which the price table bills above input.
func (p *Parser) messagesUsage() (providers.Usage, cliagent.CacheWrites) {
	u, w := providers.Usage{}, cliagent.CacheWrites{}
	for _, id := range p.msgOrder {
		m := p.msgUsage[id]
		u, w = u.Add(m.normalised()), w.Add(m.writes())
	}
	u.CostUSD = nil
	return u, w
}

// isWorkflow tells the workflow server's tools.
func isWorkflow(name string) bool { return strings.HasPrefix(name, "mcp__"+relay.ServerName+"__") }

// kindOf files a Claude Code tool under a tools.jsonl kind.
func kindOf(name string) string {
	switch {
	case strings.HasPrefix(name, "mcp__"):
		return "mcp"
	case name == "Bash" || name == "BashOutput" || name == "KillShell":
		return "command"
	case name == "Write" || name == "Edit" || name == "MultiEdit" || name == "NotebookEdit":
		return "file_change"
	case name == "WebSearch":
		return "web_search" // not a tool call the step's limit counts, as in every other agent
	}
	return "tool"
}

func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	out, _ := json.Marshal(v)
	return out
}

// resultText is a tool result's text: a string, or text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, x := range blocks {
			b.WriteString(x.Text)
		}
		return b.String()
	}
	return string(raw)
}

func errorText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "no detail"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
