package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// NewOpenAI serves both OpenAI APIs from one handler, whatever prefix the
// client's base URL carries: a path ending in /chat/completions goes to the
// Chat Completions fake (so {base}/chat/completions, {base}/v1/chat/completions
// and Azure's /openai/deployments/{d}/chat/completions all work), a path
// ending in /responses to the Responses fake. Mount it on an httptest.Server
// and point OPENAI_BASE_URL, XAI_BASE_URL, VLLM_BASE_URL, … at it.
func NewOpenAI(s *Script) http.Handler {
	chat, resp := NewChat(s), NewResponses(s)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimSuffix(r.URL.Path, "/")
		switch {
		case isModelsList(r):
			oaiListModels(w, r, s)
		case strings.HasSuffix(p, "/chat/completions"):
			chat.ServeHTTP(w, r)
		case strings.HasSuffix(p, "/responses"):
			resp.ServeHTTP(w, r)
		default:
			oaiWriteError(w, http.StatusNotFound, "invalid_request_error", "unknown_url",
				"Unknown request URL: "+r.Method+" "+p+". Please check the URL for typos.", "")
		}
	})
}

// oaiRequest is what both OpenAI fakes read from a request body: enough to
// record the call and let the default policy pick a reply.
type oaiRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	Messages   []struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
	} `json:"messages"` // Chat Completions
	Input json.RawMessage `json:"input"` // Responses: a string or a list of items
	// Responses: include (e.g. reasoning.encrypted_content) and store.
	Include []string `json:"include"`
	Store   *bool    `json:"store"`
	Tools   []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`       // Responses function tools
		Parameters json.RawMessage `json:"parameters"` // Responses function tools
		Function   *struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"` // Chat Completions function tools
	} `json:"tools"`
}

// toolNames lists the function tools offered and the vote tool's enum.
func (q *oaiRequest) toolNames() (names, enum []string) {
	for _, t := range q.Tools {
		name, params := t.Name, t.Parameters
		if t.Function != nil {
			name, params = t.Function.Name, t.Function.Parameters
		}
		if name == "" {
			continue
		}
		names = append(names, name)
		if name == "vote" {
			enum = voteEnum(params)
		}
	}
	return names, enum
}

// check returns the message of the 400 the real API would send for a
// request that breaks its conversation rules, or "".
func (q *oaiRequest) check(format string) string {
	if len(q.ToolChoice) > 0 && string(q.ToolChoice) != "null" && len(q.Tools) == 0 {
		return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
	}
	if format == "chat" {
		return q.checkChat()
	}
	return q.checkResponses()
}

func (q *oaiRequest) checkChat() string {
	if len(q.Messages) == 0 {
		return "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."
	}
	pending := map[string]bool{}
	for i, m := range q.Messages {
		if m.Role == "tool" {
			if !pending[m.ToolCallID] {
				return fmt.Sprintf("Invalid parameter: messages[%d]: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", i)
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'."
		}
		for _, tc := range m.ToolCalls {
			pending[tc.ID] = true
		}
	}
	if len(pending) > 0 {
		return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'."
	}
	return ""
}

func (q *oaiRequest) checkResponses() string {
	if len(q.Input) == 0 || q.Input[0] != '[' {
		return ""
	}
	var items []struct {
		Type             string `json:"type"`
		CallID           string `json:"call_id"`
		ID               string `json:"id"`
		EncryptedContent string `json:"encrypted_content"`
	}
	if err := json.Unmarshal(q.Input, &items); err != nil {
		return "Invalid 'input': " + err.Error()
	}
	calls := map[string]bool{}
	for _, it := range items {
		switch it.Type {
		case "reasoning":
			// Without store, an item id refers to nothing: the reasoning
			// must come back as the encrypted content the API gave out.
			if q.Store != nil && !*q.Store && !strings.HasPrefix(it.EncryptedContent, respEncryptedPrefix) {
				return "Item with id '" + it.ID + "' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
			}
		case "function_call":
			calls[it.CallID] = true
		case "function_call_output":
			if !calls[it.CallID] {
				return "No tool call found for function call output with call_id " + it.CallID + "."
			}
		}
	}
	return ""
}

// oaiRead parses a POST body into a recorded Call, or writes the 4xx the real
// API would and reports false.
func oaiRead(w http.ResponseWriter, r *http.Request, format string) (Call, oaiRequest, bool) {
	var q oaiRequest
	if r.Method != http.MethodPost {
		oaiWriteError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed",
			"Only POST is supported on "+r.URL.Path+".", "")
		return Call{}, q, false
	}
	var body json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		oaiWriteError(w, http.StatusBadRequest, "invalid_request_error", "",
			"We could not parse the JSON body of your request: "+err.Error(), "")
		return Call{}, q, false
	}
	if err := json.Unmarshal(body, &q); err != nil || q.Model == "" {
		oaiWriteError(w, http.StatusBadRequest, "invalid_request_error", "missing_required_parameter",
			"you must provide a model parameter", "")
		return Call{}, q, false
	}
	if msg := q.check(format); msg != "" {
		oaiWriteError(w, http.StatusBadRequest, "invalid_request_error", "", msg, "")
		return Call{}, q, false
	}
	tools, enum := q.toolNames()
	c := Call{Format: format, Model: q.Model, Stream: q.Stream, Tools: tools, VoteEnum: enum,
		Body: body, Header: r.Header.Clone()}
	if msg := c.withImages(); msg != "" {
		oaiWriteError(w, http.StatusBadRequest, "invalid_request_error", "invalid_value", msg, "")
		return Call{}, q, false
	}
	return c, q, true
}

// oaiTurn reads a request and takes the script's next reply for it, waiting
// its delay; false when the request was refused (the 4xx is written), the
// client left, or the script asks for a kind the OpenAI fakes cannot play
// (a 500 says so).
func oaiTurn(w http.ResponseWriter, r *http.Request, s *Script, format string) (Call, oaiRequest, Reply, bool) {
	c, q, ok := oaiRead(w, r, format)
	if !ok {
		return c, q, Reply{}, false
	}
	rep := s.Next(c)
	if !oaiWait(r, rep.Delay) {
		return c, q, rep, false
	}
	if !oaiKnown(rep.Kind) && (rep.Kind != ReplyWebSearch || format != "responses") {
		// Chat Completions has no hosted web search to play.
		oaiUnknown(w, rep.Kind)
		return c, q, rep, false
	}
	return c, q, rep, true
}

// oaiWait sleeps for a reply's delay; false when the client left first.
func oaiWait(r *http.Request, d Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(time.Duration(d))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// oaiIDs numbers the ids a fake hands out (call_1, fc_2, …) across requests.
var oaiIDs atomic.Int64

func oaiID(prefix string) string { return prefix + strconv.FormatInt(oaiIDs.Add(1), 10) }

// oaiCall is a scripted workflow call as the wire carries it.
type oaiCall struct {
	name, args string
}

// oaiCallOf renders the tool call of a new_answer, vote, tool_call or
// malformed_args reply; ok is false for every other kind.
func oaiCallOf(r Reply) (oaiCall, bool) {
	switch r.Kind {
	case ReplyToolCall:
		args := string(r.Input)
		if len(r.Input) == 0 {
			args = "{}"
		}
		return oaiCall{r.Tool, args}, true
	case ReplyNewAnswer, ReplyWebSearch:
		b, _ := json.Marshal(answerArgs(r))
		return oaiCall{"new_answer", string(b)}, true
	case ReplyVote:
		b, _ := json.Marshal(map[string]string{"agent_id": r.Agent, "reason": r.Reason})
		return oaiCall{"vote", string(b)}, true
	case ReplyMalformedArgs:
		// Cut off mid-string, as a model that ran out of tokens would.
		c, _ := json.Marshal(r.Content)
		return oaiCall{"new_answer", `{"content": ` + strings.TrimSuffix(string(c), `"`)}, true
	}
	return oaiCall{}, false
}

// oaiKnown says whether the OpenAI fakes can play a reply kind.
func oaiKnown(kind string) bool {
	switch kind {
	case ReplyNewAnswer, ReplyVote, ReplyText, ReplyToolCall, ReplyMalformedArgs, ReplyStatus, ReplyStreamError, ReplyStall, ReplyCut, ReplyFlood:
		return true
	}
	return false
}

// oaiUnknown answers a reply kind the fakes cannot play.
func oaiUnknown(w http.ResponseWriter, kind string) {
	oaiWriteError(w, http.StatusInternalServerError, "server_error", "",
		fmt.Sprintf("fake: the script asks for reply kind %q, which the OpenAI fakes cannot play", kind), "")
}

// oaiAsText is how a model without tool calling writes a workflow call when
// the request offered no tools: one JSON object in its text.
func oaiAsText(c oaiCall) string {
	if !json.Valid([]byte(c.args)) {
		return `{"tool": "` + c.name + `", "arguments": ` + c.args
	}
	return `{"tool": "` + c.name + `", "arguments": ` + c.args + `}`
}

// oaiUsage is the usage a reply reports, its zero fields filled from text
// length (about four bytes a token). Input includes CachedInput and Output
// includes Reasoning, as in providers.Usage.
func oaiUsage(r Reply, c Call, out string) Usage {
	var u Usage
	if r.Usage != nil {
		u = *r.Usage
	}
	if u.Zero {
		return Usage{}
	}
	if u.Input == 0 {
		u.Input = int64(c.inputChars())/4 + 1 + u.CachedInput
	}
	if u.Output == 0 {
		u.Output = int64(len(out))/4 + 1 + u.Reasoning
	}
	return u
}

// oaiPieces cuts s into up to three pieces on rune boundaries, the way a
// stream delivers text and argument fragments.
func oaiPieces(s string) []string {
	if len(s) < 8 {
		return []string{s}
	}
	var out []string
	step := len(s)/3 + 1
	for len(s) > 0 {
		n := min(step, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// oaiErrorFields fills an error reply's type, code and message with what
// OpenAI sends for its status when the script leaves them empty.
func oaiErrorFields(r Reply, auth string) (status int, typ, code, msg string) {
	status, typ, code, msg = r.Status, r.ErrorType, r.ErrorCode, r.ErrorMessage
	if status == 0 {
		status = http.StatusInternalServerError
	}
	quota := typ == "insufficient_quota" || code == "insufficient_quota"
	def := func(t, c, m string) {
		if typ == "" {
			typ = t
		}
		if code == "" {
			code = c
		}
		if msg == "" {
			msg = m
		}
	}
	switch {
	case quota:
		def("insufficient_quota", "insufficient_quota",
			"You exceeded your current quota, please check your plan and billing details.")
	case status == http.StatusUnauthorized:
		def("invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+oaiMaskKey(auth)+
			". You can find your API key at https://platform.openai.com/account/api-keys.")
	case status == http.StatusForbidden:
		def("invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported")
	case status == http.StatusNotFound:
		def("invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it.")
	case status == http.StatusTooManyRequests:
		def("requests", "rate_limit_exceeded",
			"Rate limit reached for requests. Please try again in 20ms.")
	case status == 529:
		def("overloaded_error", "overloaded", "Overloaded")
	case status == http.StatusServiceUnavailable:
		def("server_error", "server_is_overloaded", "The server is overloaded or not ready yet.")
	case status >= 500:
		def("server_error", "server_error", "The server had an error while processing your request. Sorry about that!")
	default:
		def("invalid_request_error", "", "Invalid request.")
	}
	return status, typ, code, msg
}

// oaiMaskKey shows a key the way OpenAI's 401 message does: a few leading
// and trailing characters around stars.
func oaiMaskKey(authorization string) string {
	k := strings.TrimPrefix(authorization, "Bearer ")
	if len(k) < 12 {
		return strings.Repeat("*", len(k))
	}
	return k[:3] + strings.Repeat("*", len(k)-7) + k[len(k)-4:]
}

// oaiErrorBody is OpenAI's error envelope {"error":{message,type,param,code}}.
func oaiErrorBody(typ, code, msg string) map[string]any {
	var c any
	if code != "" {
		c = code
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}}
}

// oaiWriteError answers with an HTTP error in OpenAI's shape.
func oaiWriteError(w http.ResponseWriter, status int, typ, code, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
		if s, err := strconv.ParseFloat(retryAfter, 64); err == nil {
			w.Header().Set("Retry-After-Ms", strconv.FormatInt(int64(s*1000), 10))
		}
	}
	oaiWriteJSON(w, status, oaiErrorBody(typ, code, msg))
}

// oaiWriteStatus plays a status reply.
func oaiWriteStatus(w http.ResponseWriter, r *http.Request, rep Reply) {
	status, typ, code, msg := oaiErrorFields(rep, r.Header.Get("Authorization"))
	oaiWriteError(w, status, typ, code, msg, rep.RetryAfter)
}

func oaiWriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oaiSSE writes server-sent events and flushes each one.
type oaiSSE struct {
	w   http.ResponseWriter
	f   http.Flusher
	seq int
	err error // the last write's
}

func oaiStartSSE(w http.ResponseWriter) *oaiSSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &oaiSSE{w: w, f: f}
}

// data sends a `data:` line only, as Chat Completions does.
func (s *oaiSSE) data(v any) {
	b, _ := json.Marshal(v)
	_, s.err = fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.flush()
}

// done ends a Chat Completions stream.
func (s *oaiSSE) done() {
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	s.flush()
}

// event sends a typed Responses event: an `event:` line and a `data:` line
// whose object carries the same type and the next sequence number.
func (s *oaiSSE) event(typ string, fields map[string]any) {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	b, _ := json.Marshal(fields)
	_, s.err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", typ, b)
	s.flush()
}

func (s *oaiSSE) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// oaiStall holds a started stream open until the client gives up.
func oaiStall(r *http.Request) { <-r.Context().Done() }
