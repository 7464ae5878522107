package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/massgen-go/massgen-mcp/providers"
)

// anthropicSignature is the signature the fake puts on its thinking blocks
// and requires back on every replayed one.
const anthropicSignature = "fake-signature"

// anthropicFormat is the Call.Format of requests to the Anthropic fake.
const anthropicFormat = "anthropic"

// claudeCodeFormat is the Call.Format of a Claude Code request that offers
// the workflow server's tools (claudecode.go).
const claudeCodeFormat = "claude_code"

// NewAnthropic returns a fake Anthropic Messages API: POST {base}/v1/messages,
// streaming (event: + data: frames, as the real API sends them) or not, as the
// request asks. The SDK appends /v1/messages to its base URL, so the fake
// answers on any path ending in /v1/messages: a base URL given with or without
// /v1 both work.
//
// It checks what the real API rejects — a missing key or anthropic-version
// header, max_tokens, empty text blocks, tool_use without its tool_result,
// more than four cache_control breakpoints, thinking with a forced
// tool_choice or a temperature, a thinking budget not below max_tokens — and
// answers those with Anthropic's 400 invalid_request_error, without consuming
// a scripted reply. Every other request is recorded (Script.Calls) and plays
// the script's next reply for its model.
func NewAnthropic(script *Script) http.Handler {
	return &anthropicServer{script: script}
}

type anthropicServer struct {
	script *Script
	seq    atomic.Int64 // ids of messages, tool uses and requests
}

// anthropicRequest is the part of a Messages request the fake reads.
type anthropicRequest struct {
	Model      string             `json:"model"`
	MaxTokens  *int64             `json:"max_tokens"`
	Stream     bool               `json:"stream"`
	System     json.RawMessage    `json:"system"` // a string or text blocks
	Messages   []anthropicMessage `json:"messages"`
	Tools      []anthropicTool    `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int64  `json:"budget_tokens"`
	} `json:"thinking"`
	Temperature *float64 `json:"temperature"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or blocks
}

type anthropicBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	Signature    *string         `json:"signature"`
	ID           string          `json:"id"`
	ToolUseID    string          `json:"tool_use_id"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type anthropicTool struct {
	Type         string          `json:"type"` // "" or custom for a client tool; a server tool's version (web_search_20250305)
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control"`
}

func (s *anthropicServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isModelsList(r) {
		s.listModels(w, r)
		return
	}
	if !strings.HasSuffix(strings.TrimSuffix(r.URL.Path, "/"), "/v1/messages") {
		s.fail(w, http.StatusNotFound, "not_found_error", "Not found: "+r.URL.Path, "", "")
		return
	}
	if r.Method != http.MethodPost {
		s.fail(w, http.StatusMethodNotAllowed, "invalid_request_error", "Method not allowed: use POST", "", "")
		return
	}
	if r.Header.Get("X-Api-Key") == "" && r.Header.Get("Authorization") == "" {
		s.fail(w, http.StatusUnauthorized, "authentication_error", "x-api-key header is required", "", "")
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required", "", "")
		return
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(r.Body); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "could not read the request body: "+err.Error(), "", "")
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(body.Bytes(), &req); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "The request body is not valid JSON: "+err.Error(), "", "")
		return
	}
	if r.URL.Query().Get("beta") == "true" {
		// Claude Code's beta requests carry role "system" messages among the
		// turns (research/cli-agents.md), which the beta API takes; they hold
		// no turn of the conversation, so the fake leaves them out.
		req.Messages = slices.DeleteFunc(req.Messages, func(m anthropicMessage) bool { return m.Role == "system" })
	}
	if msg := req.check(); msg != "" {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", msg, "", "")
		return
	}
	call := Call{
		Format: anthropicFormat,
		Model:  req.Model,
		Stream: req.Stream,
		Body:   json.RawMessage(body.Bytes()),
		Header: r.Header.Clone(),
	}
	if msg := call.withImages(); msg != "" {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", msg, "", "")
		return
	}
	for _, t := range req.Tools {
		call.Tools = append(call.Tools, t.Name)
		if t.Name == providers.ToolVote {
			call.VoteEnum = voteEnum(t.InputSchema)
		}
	}
	thinking := req.Thinking != nil && req.Thinking.Type != "disabled"
	if cc := claudeCodeTurnOf(&req); cc.workflow {
		// Claude Code with the workflow server: once a workflow call has
		// returned, the model ends its turn, as with the other CLIs.
		if cc.answered != "" {
			s.play(w, r, Reply{Kind: ReplyText, Content: cliFinalText(cc.answered), Usage: s.script.ownUsage()}, call, call.inputChars(), thinking)
			return
		}
		call.VoteEnum, call.Format = cc.enum, claudeCodeFormat
	}
	reply := s.script.Next(call)
	if !anthropicSleep(r, time.Duration(reply.Delay)) {
		return
	}
	s.play(w, r, reply, call, call.inputChars(), thinking)
}

// check returns the message of the 400 the real API would send, or "".
func (q *anthropicRequest) check() string {
	if q.Model == "" {
		return "model: Field required"
	}
	if q.MaxTokens == nil {
		return "max_tokens: Field required"
	}
	if *q.MaxTokens < 1 {
		return "max_tokens: Input should be greater than or equal to 1"
	}
	if len(q.Messages) == 0 {
		return "messages: at least one message is required"
	}
	breakpoints := 0
	for _, t := range q.Tools {
		if t.Name == "" {
			return "tools: every tool needs a name"
		}
		if t.Type != "" && t.Type != "custom" {
			if t.Type != "web_search_20250305" || t.Name != "web_search" {
				return fmt.Sprintf("tools.%s: unknown tool type %q", t.Name, t.Type)
			}
			continue // a server tool has no input schema
		}
		var schema struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(t.InputSchema, &schema) != nil || schema.Type != "object" {
			return fmt.Sprintf("tools.%s.input_schema.type: Input should be 'object'", t.Name)
		}
		if anthropicHasCache(t.CacheControl) {
			breakpoints++
		}
	}
	if len(q.System) > 0 && q.System[0] == '[' {
		var blocks []anthropicBlock
		if err := json.Unmarshal(q.System, &blocks); err != nil {
			return "system: " + err.Error()
		}
		for _, b := range blocks {
			if b.Type != "text" || b.Text == nil || *b.Text == "" {
				return "system: text content blocks must be non-empty"
			}
			if anthropicHasCache(b.CacheControl) {
				breakpoints++
			}
		}
	}
	var pending []string // tool_use ids the next message must answer
	// The last assistant message: with thinking on, one that used tools must
	// start with its (signed) thinking block.
	lastAssistant, lastUses, lastFirst := -1, false, ""
	for i, m := range q.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if i == 0 && m.Role != "user" {
			return "messages: the first message must use the \"user\" role"
		}
		var blocks []anthropicBlock
		if len(m.Content) > 0 && m.Content[0] == '"' {
			var s string
			_ = json.Unmarshal(m.Content, &s)
			if s == "" {
				return fmt.Sprintf("messages.%d: text content blocks must be non-empty", i)
			}
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
			return fmt.Sprintf("messages.%d.content: at least one content block is required", i)
		}
		answered := map[string]bool{}
		var uses []string
		for _, b := range blocks {
			if anthropicHasCache(b.CacheControl) {
				breakpoints++
			}
			switch b.Type {
			case "text":
				if b.Text == nil || *b.Text == "" {
					return fmt.Sprintf("messages.%d: text content blocks must be non-empty", i)
				}
			case "tool_use":
				if m.Role != "assistant" {
					return fmt.Sprintf("messages.%d: tool_use blocks may only appear in assistant messages", i)
				}
				uses = append(uses, b.ID)
			case "thinking":
				if m.Role != "assistant" || b.Signature == nil || *b.Signature != anthropicSignature {
					return fmt.Sprintf("messages.%d.content: Invalid `signature` in `thinking` block", i)
				}
			case "tool_result":
				if m.Role != "user" {
					return fmt.Sprintf("messages.%d: tool_result blocks may only appear in user messages", i)
				}
				if !anthropicContains(pending, b.ToolUseID) {
					return fmt.Sprintf("messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, b.ToolUseID)
				}
				answered[b.ToolUseID] = true
			}
		}
		for _, id := range pending {
			if !answered[id] {
				return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, id)
			}
		}
		pending = uses
		if m.Role == "assistant" {
			lastAssistant, lastUses = i, len(uses) > 0
			lastFirst = ""
			if len(blocks) > 0 {
				lastFirst = blocks[0].Type
			}
		}
	}
	if len(pending) > 0 {
		return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(q.Messages)-1, pending[0])
	}
	if breakpoints > 4 {
		return fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", breakpoints)
	}
	if c := q.ToolChoice; c != nil && c.Type == "tool" {
		found := false
		for _, t := range q.Tools {
			found = found || t.Name == c.Name
		}
		if !found {
			return fmt.Sprintf("tool_choice: tool %q was not found in tools", c.Name)
		}
	}
	if t := q.Thinking; t != nil {
		switch t.Type {
		case "enabled":
			if t.BudgetTokens < 1024 {
				return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
			}
			if t.BudgetTokens >= *q.MaxTokens {
				return "`max_tokens` must be greater than `thinking.budget_tokens`"
			}
		case "adaptive", "disabled":
		default:
			return fmt.Sprintf("thinking.type: unknown thinking type %q", t.Type)
		}
		if t.Type != "disabled" {
			if c := q.ToolChoice; c != nil && (c.Type == "any" || c.Type == "tool") {
				return "Thinking may not be enabled when tool_choice forces tool use."
			}
			if q.Temperature != nil && *q.Temperature != 1 {
				return "`temperature` may only be set to 1 when thinking is enabled."
			}
			if lastUses && lastFirst != "thinking" && lastFirst != "redacted_thinking" {
				return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.", lastAssistant, lastFirst)
			}
		}
	}
	return ""
}

func anthropicHasCache(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func anthropicContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// voteEnum reads properties.agent_id.enum from a vote tool's JSON schema, as
// every fake records it; nil when the schema has none.
func voteEnum(schema json.RawMessage) []string {
	var s struct {
		Properties struct {
			AgentID struct {
				Enum []string `json:"enum"`
			} `json:"agent_id"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Properties.AgentID.Enum
}

// sleep waits d, or until the client goes away (false).
func anthropicSleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// anthropicStatus maps an HTTP status to Anthropic's error type and message.
func anthropicStatus(status int) (string, string) {
	switch status {
	case 400:
		return "invalid_request_error", "Invalid request"
	case 401:
		return "authentication_error", "invalid x-api-key"
	case 402:
		return "billing_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."
	case 403:
		return "permission_error", "Your API key does not have permission to use the specified resource."
	case 404:
		return "not_found_error", "Not found"
	case 413:
		return "request_too_large", "Request exceeds the maximum allowed number of bytes."
	case 429:
		return "rate_limit_error", "This request would exceed the rate limit for your organization. Please try again later."
	case 504:
		return "timeout_error", "Request timed out"
	case 529:
		return "overloaded_error", "Overloaded"
	}
	return "api_error", "Internal server error"
}

// fail writes Anthropic's error envelope.
func (s *anthropicServer) fail(w http.ResponseWriter, status int, typ, msg, code, retryAfter string) {
	id := fmt.Sprintf("req_fake_%d", s.seq.Add(1))
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("request-id", id)
	if retryAfter != "" {
		h.Set("retry-after", retryAfter)
	}
	w.WriteHeader(status)
	_, _ = w.Write(anthropicJSON(anthropicErrorBody(typ, msg, code, id)))
}

func anthropicErrorBody(typ, msg, code, requestID string) map[string]any {
	e := map[string]any{"type": typ, "message": msg}
	if code != "" {
		e["details"] = map[string]any{"error_code": code}
	}
	b := map[string]any{"type": "error", "error": e}
	if requestID != "" {
		b["request_id"] = requestID
	}
	return b
}

// replyError fills a reply's error fields from its status.
func anthropicReplyError(reply Reply, defStatus int) (int, string, string) {
	status := reply.Status
	if status == 0 {
		status = defStatus
	}
	typ, msg := anthropicStatus(status)
	if reply.ErrorType != "" {
		typ = reply.ErrorType
	}
	if reply.ErrorMessage != "" {
		msg = reply.ErrorMessage
	}
	return status, typ, msg
}

// anthropicOut is one rendered content block.
type anthropicOut struct {
	kind  string // text, tool_use, thinking
	text  string // text or thinking
	id    string
	name  string
	input string // the tool input's JSON text, possibly malformed
}

// blocks renders a reply's content and stop reason.
func (s *anthropicServer) blocks(reply Reply, call Call) ([]anthropicOut, string) {
	tool := func(name string, input any) anthropicOut {
		return anthropicOut{kind: "tool_use", id: fmt.Sprintf("toolu_fake_%d", s.seq.Add(1)), name: name, input: string(anthropicJSON(input))}
	}
	switch reply.Kind {
	case ReplyNewAnswer:
		return []anthropicOut{tool(offeredName(call.Tools, providers.ToolNewAnswer), answerArgs(reply))}, "tool_use"
	case ReplyVote:
		return []anthropicOut{tool(offeredName(call.Tools, providers.ToolVote), map[string]string{"agent_id": reply.Agent, "reason": reply.Reason})}, "tool_use"
	case ReplyWriteFiles:
		if call.Format == claudeCodeFormat && len(reply.Files) > 0 {
			return []anthropicOut{tool(claudeCodeWrite(reply, call.Body))}, "tool_use"
		}
	case ReplyToolCall:
		out := tool(reply.Tool, nil)
		out.input = string(reply.Input)
		return []anthropicOut{out}, "tool_use"
	case ReplyWebSearch:
		// The server tool ran within this message: its use and its result
		// come first, then the model's answer.
		id := fmt.Sprintf("srvtoolu_fake_%d", s.seq.Add(1))
		after := tool(providers.ToolNewAnswer, answerArgs(reply))
		if reply.Tool != "" {
			// A search, then a call of a client tool: the model works on.
			after = tool(reply.Tool, nil)
			after.input = string(reply.Input)
		}
		return []anthropicOut{
			{kind: "server_tool_use", id: id, name: "web_search", input: string(anthropicJSON(map[string]string{"query": reply.Query}))},
			{kind: "web_search_tool_result", id: id},
			after,
		}, "tool_use"
	case ReplyPausedSearch:
		// A search that runs long: the API stops the message after the
		// server tool's blocks, and the client sends it back to go on.
		id := fmt.Sprintf("srvtoolu_fake_%d", s.seq.Add(1))
		return []anthropicOut{
			{kind: "server_tool_use", id: id, name: "web_search", input: string(anthropicJSON(map[string]string{"query": reply.Query}))},
			{kind: "web_search_tool_result", id: id},
		}, "pause_turn"
	case ReplyMalformedArgs:
		name := providers.ToolNewAnswer
		if len(call.Tools) > 0 {
			name = call.Tools[0]
		}
		out := tool(name, nil)
		out.input = reply.Content
		if out.input == "" {
			out.input = `{"content": "an answer that never clo`
		}
		return []anthropicOut{out}, "tool_use"
	}
	return []anthropicOut{{kind: "text", text: reply.Content}}, "end_turn"
}

// anthropicUsage is the usage the fake reports, in wire terms.
type anthropicUsage struct {
	input, cacheRead, cacheWrite, output, thinking int64
}

func (s *anthropicServer) usage(reply Reply, bodyLen int, blocks []anthropicOut) anthropicUsage {
	var u Usage
	if reply.Usage != nil {
		u = *reply.Usage
	}
	if u.Zero {
		return anthropicUsage{}
	}
	if u.Input == 0 {
		u.Input = int64(bodyLen+3) / 4
	}
	if u.Output == 0 {
		n := 0
		for _, b := range blocks {
			n += utf8.RuneCountInString(b.text) + utf8.RuneCountInString(b.input)
		}
		u.Output = int64(n+3)/4 + u.Reasoning
	}
	// Anthropic's input_tokens counts only the uncached part; a fake's Input
	// is all input, as providers.Usage counts it.
	uncached := u.Input - u.CachedInput - u.CacheWrite
	if uncached < 0 {
		uncached = 0
	}
	return anthropicUsage{input: uncached, cacheRead: u.CachedInput, cacheWrite: u.CacheWrite, output: u.Output, thinking: u.Reasoning}
}

func (u anthropicUsage) start() map[string]any {
	return map[string]any{
		"input_tokens":                u.input,
		"cache_creation_input_tokens": u.cacheWrite,
		"cache_read_input_tokens":     u.cacheRead,
		"cache_creation":              map[string]any{"ephemeral_5m_input_tokens": u.cacheWrite, "ephemeral_1h_input_tokens": 0},
		"output_tokens":               1,
		"service_tier":                "standard",
	}
}

func (u anthropicUsage) final() map[string]any {
	m := u.start()
	m["output_tokens"] = u.output
	if u.thinking > 0 {
		m["output_tokens_details"] = map[string]any{"thinking_tokens": u.thinking}
	}
	return m
}

// play renders one reply, streaming or not.
func (s *anthropicServer) play(w http.ResponseWriter, r *http.Request, reply Reply, call Call, bodyLen int, thinking bool) {
	switch reply.Kind {
	case ReplyStatus:
		status, typ, msg := anthropicReplyError(reply, http.StatusInternalServerError)
		s.fail(w, status, typ, msg, reply.ErrorCode, reply.RetryAfter)
		return
	case ReplyStreamError:
		if !call.Stream {
			// A plain request has no stream to break: the error comes as a status.
			status, typ, msg := anthropicReplyError(reply, 529)
			s.fail(w, status, typ, msg, reply.ErrorCode, reply.RetryAfter)
			return
		}
	case ReplyStall, ReplyCut, ReplyFlood:
		if !call.Stream {
			<-r.Context().Done() // a whole reply cannot be cut or flood: it waits instead
			return
		}
	}
	blocks, stop := s.blocks(reply, call)
	if thinking && reply.Kind != ReplyStreamError && reply.Kind != ReplyStall && reply.Kind != ReplyCut && reply.Kind != ReplyFlood {
		blocks = append([]anthropicOut{{kind: "thinking", text: "Weighing the answers shown before acting."}}, blocks...)
	}
	u := s.usage(reply, bodyLen, blocks)
	id := fmt.Sprintf("msg_fake_%d", s.seq.Add(1))
	if !call.Stream {
		s.message(w, id, call.Model, blocks, stop, u)
		return
	}
	s.stream(w, r, reply, id, call.Model, blocks, stop, u)
}

// message writes a non-streaming reply.
func (s *anthropicServer) message(w http.ResponseWriter, id, model string, blocks []anthropicOut, stop string, u anthropicUsage) {
	content := make([]any, 0, len(blocks))
	for _, b := range blocks {
		switch b.kind {
		case "text":
			content = append(content, map[string]any{"type": "text", "text": b.text})
		case "thinking":
			content = append(content, map[string]any{"type": "thinking", "thinking": b.text, "signature": anthropicSignature})
		case "server_tool_use":
			content = append(content, map[string]any{"type": "server_tool_use", "id": b.id, "name": b.name, "input": json.RawMessage(b.input)})
		case "web_search_tool_result":
			content = append(content, anthropicSearchResult(b.id))
		case "tool_use":
			var input any = json.RawMessage(b.input)
			if !json.Valid([]byte(b.input)) {
				// The real API always sends an object; a broken one can only
				// be shown as a string the client cannot use as arguments.
				input = b.input
			}
			content = append(content, map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": input})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", fmt.Sprintf("req_fake_%d", s.seq.Add(1)))
	_, _ = w.Write(anthropicJSON(map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": u.final(),
	}))
}

// stream writes a streaming reply: the events of research §2.3, each with an
// event: line (the SDK drops events without one) and flushed on its own.
func (s *anthropicServer) stream(w http.ResponseWriter, r *http.Request, reply Reply, id, model string, blocks []anthropicOut, stop string, u anthropicUsage) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("request-id", fmt.Sprintf("req_fake_%d", s.seq.Add(1)))
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	var werr error // the last write's
	send := func(name string, data map[string]any) {
		data["type"] = name
		var b bytes.Buffer
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteString("\ndata: ")
		b.Write(anthropicJSON(data))
		b.WriteString("\n\n")
		_, werr = w.Write(b.Bytes())
		if flusher != nil {
			flusher.Flush()
		}
	}
	// running reports the usage so far (Reply.RunningUsage): cumulative, as
	// every message_delta's is, with no stop_reason yet.
	running := func(pieces int) {
		if reply.RunningUsage {
			so := u.start()
			so["output_tokens"] = pieces
			send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": nil, "stop_sequence": nil}, "usage": so})
		}
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": u.start(),
	}})
	switch reply.Kind {
	case ReplyStall:
		<-r.Context().Done()
		return
	case ReplyCut, ReplyFlood:
		send("ping", map[string]any{})
		send("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		delta := func(text string) {
			send("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
		}
		if reply.Kind == ReplyFlood {
			for flooding(r, werr) {
				delta(floodPiece)
			}
			return
		}
		for i, piece := range anthropicPieces(reply.Content, 48) {
			delta(piece)
			running(i + 1)
		}
		cutConnection()
	case ReplyStreamError:
		send("ping", map[string]any{})
		_, typ, msg := anthropicReplyError(reply, 529)
		send("error", anthropicErrorBody(typ, msg, reply.ErrorCode, ""))
		return
	}
	send("ping", map[string]any{})
	for i, b := range blocks {
		switch b.kind {
		case "text":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, piece := range anthropicPieces(b.text, 48) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": piece}})
			}
		case "thinking":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, piece := range anthropicPieces(b.text, 48) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": piece}})
			}
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "signature_delta", "signature": anthropicSignature}})
		case "server_tool_use":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "server_tool_use", "id": b.id, "name": b.name, "input": map[string]any{}}})
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": b.input}})
		case "web_search_tool_result":
			send("content_block_start", map[string]any{"index": i, "content_block": anthropicSearchResult(b.id)})
		case "tool_use":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": map[string]any{}}})
			// The real API sends an empty first piece, then the input in
			// fragments that split keys, strings and escapes anywhere.
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
			for _, piece := range anthropicPieces(b.input, 17) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
			}
		}
		send("content_block_stop", map[string]any{"index": i})
		running(i + 1)
	}
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": u.final()})
	send("message_stop", map[string]any{})
}

// anthropicSearchResult is a web_search_tool_result block with one result,
// as the server tool returns it (the page text travels encrypted).
func anthropicSearchResult(useID string) map[string]any {
	return map[string]any{"type": "web_search_tool_result", "tool_use_id": useID, "content": []any{map[string]any{
		"type": "web_search_result", "url": "https://example.com/result", "title": "A result",
		"encrypted_content": "ZmFrZSBwYWdlIHRleHQ=", "page_age": "April 1, 2025"}}}
}

// pieces cuts s into chunks of at most n bytes on rune boundaries; an empty
// s is one empty piece.
func anthropicPieces(s string, n int) []string {
	if len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// marshal encodes JSON as the real APIs do, leaving <, > and & unescaped.
func anthropicJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
