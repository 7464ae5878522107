package fake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GeminiDummySignature is the thought signature Google documents for function
// calls a client writes into the history itself; the real API (and this
// fake) accept it in place of a signature it issued.
const GeminiDummySignature = "skip_thought_signature_validator"

// NewGemini returns a fake Gemini API (generativelanguage.googleapis.com)
// that plays script:
//
//	POST {base}/{version}/models/{model}:generateContent
//	POST {base}/{version}/models/{model}:streamGenerateContent?alt=sse
//
// It renders each Reply as the real API does: function calls as
// candidates[0].content.parts[].functionCall with an object args,
// finishReason STOP, usageMetadata (promptTokenCount includes
// cachedContentTokenCount; thoughtsTokenCount is separate from
// candidatesTokenCount), modelVersion and responseId, and never a
// continuationToken. Streams are `data:` lines only, CRLF-framed, with no
// [DONE]; text comes in a few chunks, a function call in one. For gemini-3*
// models the first function-call part (or the last part of a text reply)
// carries a thoughtSignature, and like the real API the fake refuses (400) a
// request whose current turn replays a function call without the signature
// it issued (or Google's documented dummy).
//
// malformed_args is finishReason MALFORMED_FUNCTION_CALL with no content
// (Gemini's arguments are structured, so broken JSON never reaches a client);
// stream_error sends one chunk, then `data: {"error": …}`; stall sends the
// headers and one chunk, then nothing until the client disconnects; cut sends
// the Content in one chunk with the running usage, then drops the connection;
// flood sends such chunks until the client hangs up.
//
// A reply's Usage is in the normalised form of providers.Usage: Output
// includes Reasoning, so the fake reports candidatesTokenCount =
// Output − Reasoning and thoughtsTokenCount = Reasoning.
//
// Errors use Google's body {"error": {code, message, status, details}}:
// a 429 carries a QuotaFailure (a per-day quota id when ErrorType or
// ErrorCode mentions a quota or a day, else per-minute) and a RetryInfo
// retryDelay from RetryAfter; a 400 whose ErrorType/ErrorCode mentions an API
// key or authentication carries ErrorInfo reason API_KEY_INVALID.
//
// The API key must arrive in the x-goog-api-key header (or the key query
// parameter, copied into that header of the recorded Call); without it the
// fake answers 403 PERMISSION_DENIED, as the real API does. Mount it on an
// httptest.Server and use its URL as the base URL (GOOGLE_GEMINI_BASE_URL).
func NewGemini(script *Script) http.Handler {
	return &geminiServer{script: script, issued: map[string]bool{}}
}

type geminiServer struct {
	script *Script

	mu     sync.Mutex
	n      int
	issued map[string]bool // thought signatures handed out (base64)
}

// Wire types: only the fields the fake reads or writes, spelled as the REST
// API spells them.
type (
	geminiRequest struct {
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction,omitempty"`
		Tools             []struct {
			FunctionDeclarations []geminiFunctionDecl `json:"functionDeclarations"`
		} `json:"tools,omitempty"`
		ToolConfig *struct {
			FunctionCallingConfig *struct {
				Mode                 string   `json:"mode"`
				AllowedFunctionNames []string `json:"allowedFunctionNames"`
			} `json:"functionCallingConfig"`
		} `json:"toolConfig,omitempty"`
	}
	geminiFunctionDecl struct {
		Name                 string          `json:"name"`
		Parameters           json.RawMessage `json:"parameters,omitempty"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
	}
	geminiContent struct {
		Role  string       `json:"role,omitempty"`
		Parts []geminiPart `json:"parts"`
	}
	geminiPart struct {
		Text             string                  `json:"text,omitempty"`
		Thought          bool                    `json:"thought,omitempty"`
		ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
		FunctionCall     *geminiFunctionCall     `json:"functionCall,omitempty"`
		FunctionResponse *geminiFunctionResponse `json:"functionResponse,omitempty"`
	}
	geminiFunctionCall struct {
		ID   string `json:"id,omitempty"`
		Name string `json:"name"`
		Args any    `json:"args,omitempty"`
	}
	geminiFunctionResponse struct {
		ID       string         `json:"id,omitempty"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	}
	geminiResponse struct {
		Candidates    []geminiCandidate `json:"candidates,omitempty"`
		UsageMetadata *geminiUsage      `json:"usageMetadata,omitempty"`
		ModelVersion  string            `json:"modelVersion,omitempty"`
		ResponseID    string            `json:"responseId,omitempty"`
	}
	geminiCandidate struct {
		Content           *geminiContent `json:"content,omitempty"`
		FinishReason      string         `json:"finishReason,omitempty"`
		FinishMessage     string         `json:"finishMessage,omitempty"`
		Index             int            `json:"index"`
		GroundingMetadata map[string]any `json:"groundingMetadata,omitempty"`
	}
	geminiUsage struct {
		PromptTokenCount        int64 `json:"promptTokenCount,omitempty"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount,omitempty"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount,omitempty"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount,omitempty"`
		TotalTokenCount         int64 `json:"totalTokenCount,omitempty"`
	}
	geminiError struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Status  string           `json:"status"`
		Details []map[string]any `json:"details,omitempty"`
	}
)

// ServeHTTP answers one generateContent or streamGenerateContent request.
func (g *geminiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isModelsList(r) {
		g.listModels(w, r)
		return
	}
	model, method, ok := geminiRoute(r.URL.Path)
	if r.Method != http.MethodPost || !ok {
		geminiWriteError(w, geminiError{Code: http.StatusNotFound, Status: "NOT_FOUND",
			Message: fmt.Sprintf("The requested URL %s was not found on this server.", r.URL.Path)})
		return
	}
	stream := method == "streamGenerateContent"
	if stream && r.URL.Query().Get("alt") != "sse" {
		geminiWriteError(w, geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT",
			Message: "this fake serves streamGenerateContent only with alt=sse, as the Go SDK asks"})
		return
	}
	header := r.Header.Clone()
	if header.Get("x-goog-api-key") == "" {
		if k := r.URL.Query().Get("key"); k != "" {
			header.Set("x-goog-api-key", k)
		}
	}
	if header.Get("x-goog-api-key") == "" {
		geminiWriteError(w, geminiError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED",
			Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."})
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		geminiWriteError(w, geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT",
			Message: "Invalid JSON payload received. " + err.Error()})
		return
	}
	if msg := g.check(model, &req); msg != "" {
		geminiWriteError(w, geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: msg})
		return
	}
	tools, enum := req.offered()
	call := Call{Format: "gemini", Model: model, Stream: stream, Tools: tools, VoteEnum: enum, Body: body, Header: header}
	if msg := call.withImages(); msg != "" {
		geminiWriteError(w, geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: msg})
		return
	}
	reply := g.script.Next(call)

	if d := time.Duration(reply.Delay); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	g.play(w, r, model, stream, call.inputChars(), reply)
}

// geminiRoute splits /{version}/models/{model}:{method}.
func geminiRoute(path string) (model, method string, ok bool) {
	_, rest, found := strings.Cut(strings.TrimPrefix(path, "/"), "/models/")
	if !found {
		return "", "", false
	}
	model, method, found = strings.Cut(rest, ":")
	if !found || model == "" || (method != "generateContent" && method != "streamGenerateContent") {
		return "", "", false
	}
	return model, method, true
}

// offered lists the function names the model may call (allowedFunctionNames
// under mode ANY narrow the declarations) and the vote declaration's enum.
func (req *geminiRequest) offered() (names, enum []string) {
	var allowed map[string]bool
	if req.ToolConfig != nil && req.ToolConfig.FunctionCallingConfig != nil && len(req.ToolConfig.FunctionCallingConfig.AllowedFunctionNames) > 0 {
		allowed = map[string]bool{}
		for _, n := range req.ToolConfig.FunctionCallingConfig.AllowedFunctionNames {
			allowed[n] = true
		}
	}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			if allowed != nil && !allowed[d.Name] {
				continue
			}
			names = append(names, d.Name)
			if d.Name == "vote" {
				schema := d.ParametersJSONSchema
				if len(schema) == 0 {
					schema = d.Parameters
				}
				enum = voteEnum(schema)
			}
		}
	}
	return names, enum
}

// check refuses what the real API refuses, with its wording where known.
func (g *geminiServer) check(model string, req *geminiRequest) string {
	if len(req.Contents) == 0 {
		return "* GenerateContentRequest.contents: contents is not specified"
	}
	declared := map[string]bool{}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			declared[d.Name] = true
		}
	}
	if req.ToolConfig != nil && req.ToolConfig.FunctionCallingConfig != nil {
		for _, n := range req.ToolConfig.FunctionCallingConfig.AllowedFunctionNames {
			if !declared[n] {
				return fmt.Sprintf("* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: %q is not a declared function", n)
			}
		}
	}
	turnStart := 0 // the current turn starts at the last user content with text
	for i, c := range req.Contents {
		if c.Role != "" && c.Role != "user" && c.Role != "model" {
			return fmt.Sprintf("* GenerateContentRequest.contents[%d].role: Please use a valid role: user, model.", i)
		}
		if len(c.Parts) == 0 {
			return fmt.Sprintf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i)
		}
		if c.Role != "model" {
			for _, p := range c.Parts {
				if p.Text != "" {
					turnStart = i
				}
			}
		}
	}
	calls := 0
	for i, c := range req.Contents {
		var responses int
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				responses++
			}
		}
		if responses > 0 && responses != calls {
			return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
		}
		calls = 0
		first := true
		for _, p := range c.Parts {
			if p.FunctionCall == nil {
				continue
			}
			calls++
			if c.Role != "model" {
				return fmt.Sprintf("* GenerateContentRequest.contents[%d]: function calls come from the model role.", i)
			}
			if geminiSigned(model) && i > turnStart && first {
				sig := p.ThoughtSignature
				if sig == "" {
					return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", p.FunctionCall.Name, i+1)
				}
				if !g.validSignature(sig) {
					return fmt.Sprintf("Corrupted thought signature in contents[%d].", i)
				}
			}
			first = false
		}
	}
	return ""
}

func (g *geminiServer) validSignature(sig string) bool {
	if raw, err := base64.StdEncoding.DecodeString(sig); err == nil && string(raw) == GeminiDummySignature {
		return true
	}
	if sig == GeminiDummySignature {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.issued[sig]
}

// geminiSigned tells whether a model returns (and requires back) thought
// signatures on function calls: Gemini 3 and later.
func geminiSigned(model string) bool {
	return strings.HasPrefix(strings.ToLower(model), "gemini-3")
}

// play writes the reply in the wire format the client asked for.
func (g *geminiServer) play(w http.ResponseWriter, r *http.Request, model string, stream bool, bodyLen int, reply Reply) {
	g.mu.Lock()
	g.n++
	id := fmt.Sprintf("fake-gemini-%d", g.n)
	g.mu.Unlock()

	switch reply.Kind {
	case ReplyStatus:
		geminiWriteError(w, geminiReplyError(reply, 500))
		return
	case ReplyCut, ReplyFlood:
		if !stream {
			<-r.Context().Done() // a whole reply cannot be cut or flood: it waits instead
			return
		}
		// Each chunk carries the running usage, as the real API's do: the
		// prompt's count and a candidates count that lags behind the text.
		chunk := func(text string) error {
			return geminiWriteEventErr(w, geminiResponse{
				Candidates:    []geminiCandidate{{Content: &geminiContent{Role: "model", Parts: []geminiPart{{Text: text}}}}},
				UsageMetadata: &geminiUsage{PromptTokenCount: geminiTokens(bodyLen), CandidatesTokenCount: 1, TotalTokenCount: geminiTokens(bodyLen) + 1},
				ModelVersion:  model, ResponseID: id,
			})
		}
		geminiStartSSE(w)
		if reply.Kind == ReplyFlood {
			for err := chunk(floodPiece); flooding(r, err); err = chunk(floodPiece) {
			}
			return
		}
		_ = chunk(reply.Content)
		cutConnection()
	case ReplyStreamError, ReplyStall:
		if !stream {
			if reply.Kind == ReplyStall {
				<-r.Context().Done()
				return
			}
			geminiWriteError(w, geminiReplyError(reply, 500))
			return
		}
		first := geminiResponse{
			Candidates:    []geminiCandidate{{Content: &geminiContent{Role: "model", Parts: []geminiPart{{Text: "Let me think"}}}}},
			UsageMetadata: &geminiUsage{PromptTokenCount: geminiTokens(bodyLen), TotalTokenCount: geminiTokens(bodyLen)},
			ModelVersion:  model, ResponseID: id,
		}
		geminiStartSSE(w)
		geminiWriteEvent(w, first)
		if reply.Kind == ReplyStall {
			<-r.Context().Done()
			return
		}
		e := geminiReplyError(reply, 500)
		geminiWriteEvent(w, map[string]any{"error": e})
		return
	}

	var parts []geminiPart
	finish, finishMessage := "STOP", ""
	text := ""
	switch reply.Kind {
	case ReplyNewAnswer:
		parts = []geminiPart{{FunctionCall: &geminiFunctionCall{Name: "new_answer", Args: answerArgs(reply)}}}
		text = reply.Content
	case ReplyVote:
		parts = []geminiPart{{FunctionCall: &geminiFunctionCall{Name: "vote", Args: map[string]any{"agent_id": reply.Agent, "reason": reply.Reason}}}}
		text = reply.Agent + reply.Reason
	case ReplyWebSearch:
		parts = []geminiPart{{FunctionCall: &geminiFunctionCall{Name: "new_answer", Args: answerArgs(reply)}}}
		text = reply.Content
	case ReplyToolCall:
		var args map[string]any
		_ = json.Unmarshal(reply.Input, &args)
		parts = []geminiPart{{FunctionCall: &geminiFunctionCall{Name: reply.Tool, Args: args}}}
		text = string(reply.Input)
	case ReplyMalformedArgs:
		// Gemini's arguments are structured, so a malformed call never reaches
		// the client as broken JSON: the API reports it as a finish reason
		// with no content.
		finish = "MALFORMED_FUNCTION_CALL"
		finishMessage = "Malformed function call: new_answer(content=\"unterminated"
	default: // ReplyText and anything unknown
		text = reply.Content
		parts = []geminiPart{{Text: reply.Content}}
	}
	sig := ""
	if geminiSigned(model) && len(parts) > 0 {
		sig = base64.StdEncoding.EncodeToString([]byte("fake-signature:" + id))
		g.mu.Lock()
		g.issued[sig] = true
		g.mu.Unlock()
		if parts[0].FunctionCall != nil {
			parts[0].ThoughtSignature = sig
		} else {
			parts[len(parts)-1].ThoughtSignature = sig
		}
	}
	usage := geminiUsageFor(reply.Usage, bodyLen, len(text))
	var grounding map[string]any
	if reply.Kind == ReplyWebSearch {
		// Google Search grounding ran within the call; the last chunk says
		// what it searched for and what it found.
		grounding = map[string]any{"webSearchQueries": []string{reply.Query},
			"groundingChunks": []any{map[string]any{"web": map[string]any{"uri": "https://example.com/result", "title": "A result"}}}}
	}

	if !stream {
		resp := geminiResponse{
			Candidates:    []geminiCandidate{{FinishReason: finish, FinishMessage: finishMessage, GroundingMetadata: grounding}},
			UsageMetadata: usage, ModelVersion: model, ResponseID: id,
		}
		if len(parts) > 0 {
			resp.Candidates[0].Content = &geminiContent{Role: "model", Parts: parts}
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}

	geminiStartSSE(w)
	// Text arrives in pieces, each chunk with the running usage; a function
	// call arrives whole in one chunk, as the real API sends it.
	if len(parts) == 1 && parts[0].FunctionCall == nil {
		pieces := geminiSplit(parts[0].Text, 3)
		for i, piece := range pieces[:len(pieces)-1] {
			geminiWriteEvent(w, geminiResponse{
				Candidates:    []geminiCandidate{{Content: &geminiContent{Role: "model", Parts: []geminiPart{{Text: piece}}}}},
				UsageMetadata: &geminiUsage{PromptTokenCount: usage.PromptTokenCount, CandidatesTokenCount: min(int64(i+1), usage.CandidatesTokenCount), TotalTokenCount: usage.PromptTokenCount + min(int64(i+1), usage.CandidatesTokenCount)},
				ModelVersion:  model, ResponseID: id,
			})
		}
		parts = []geminiPart{{Text: pieces[len(pieces)-1], ThoughtSignature: parts[0].ThoughtSignature}}
	}
	last := geminiResponse{
		Candidates:    []geminiCandidate{{FinishReason: finish, FinishMessage: finishMessage, GroundingMetadata: grounding}},
		UsageMetadata: usage, ModelVersion: model, ResponseID: id,
	}
	if len(parts) > 0 {
		last.Candidates[0].Content = &geminiContent{Role: "model", Parts: parts}
	}
	geminiWriteEvent(w, last)
}

// geminiUsageFor renders a scripted usage (normalised: Output includes
// Reasoning) as usageMetadata, estimating zero counts from text length.
func geminiUsageFor(u *Usage, bodyLen, textLen int) *geminiUsage {
	var in, cached, out, reasoning int64
	if u != nil {
		if u.Zero {
			return &geminiUsage{}
		}
		in, cached, out, reasoning = u.Input, u.CachedInput, u.Output, u.Reasoning
	}
	if in == 0 {
		in = geminiTokens(bodyLen)
	}
	if out == 0 {
		out = geminiTokens(textLen) + reasoning
	}
	candidates := max(out-reasoning, 0)
	return &geminiUsage{
		PromptTokenCount:        in,
		CandidatesTokenCount:    candidates,
		ThoughtsTokenCount:      reasoning,
		CachedContentTokenCount: cached,
		TotalTokenCount:         in + candidates + reasoning,
	}
}

func geminiTokens(chars int) int64 { return int64(chars/4 + 1) }

// geminiSplit cuts s into at most n pieces after spaces; the pieces joined
// are s, and there is always at least one.
func geminiSplit(s string, n int) []string {
	var out []string
	for len(out) < n-1 {
		target := len(s) / (n - len(out))
		if target == 0 {
			break
		}
		i := strings.IndexByte(s[target:], ' ')
		if i < 0 || target+i+1 >= len(s) {
			break
		}
		cut := target + i + 1
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// geminiReplyError builds Google's error body for a scripted failure.
func geminiReplyError(r Reply, defaultCode int) geminiError {
	code := r.Status
	if code == 0 {
		code = defaultCode
	}
	kind := strings.ToLower(r.ErrorType + " " + r.ErrorCode)
	e := geminiError{Code: code, Status: geminiStatus(code), Message: r.ErrorMessage}
	if c := r.ErrorCode; c != "" && c == strings.ToUpper(c) && !strings.ContainsAny(c, " -") && geminiCanonical[c] {
		e.Status = c
	}
	delay := geminiRetryDelay(r.RetryAfter)
	switch {
	case code == http.StatusTooManyRequests || e.Status == "RESOURCE_EXHAUSTED":
		daily := strings.Contains(kind, "quota") || strings.Contains(kind, "day") || strings.Contains(kind, "daily")
		quotaID, metric, limit := "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "generativelanguage.googleapis.com/generate_content_free_tier_requests", "10"
		if daily {
			quotaID, limit = "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "250"
		}
		if e.Message == "" {
			e.Message = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: " + metric + ", limit: " + limit
			if delay != "" {
				e.Message += "\nPlease retry in " + delay + "."
			}
		}
		e.Details = append(e.Details, map[string]any{
			"@type": "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []map[string]any{{
				"quotaMetric": metric, "quotaId": quotaID, "quotaValue": limit,
				"quotaDimensions": map[string]string{"location": "global"},
			}},
		}, map[string]any{
			"@type": "type.googleapis.com/google.rpc.Help",
			"links": []map[string]string{{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}},
		})
		if delay != "" {
			e.Details = append(e.Details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay})
		}
	case code == http.StatusBadRequest && (strings.Contains(kind, "key") || strings.Contains(kind, "auth")):
		if e.Message == "" {
			e.Message = "API key not valid. Please pass a valid API key."
		}
		e.Details = append(e.Details, map[string]any{
			"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
			"metadata": map[string]string{"service": "generativelanguage.googleapis.com"},
		}, map[string]any{
			"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": e.Message,
		})
	case e.Message == "":
		e.Message = geminiMessages[code]
		if e.Message == "" {
			e.Message = http.StatusText(code)
		}
	}
	return e
}

var geminiCanonical = map[string]bool{
	"INVALID_ARGUMENT": true, "FAILED_PRECONDITION": true, "UNAUTHENTICATED": true, "PERMISSION_DENIED": true,
	"NOT_FOUND": true, "RESOURCE_EXHAUSTED": true, "INTERNAL": true, "UNAVAILABLE": true, "DEADLINE_EXCEEDED": true,
	"CANCELLED": true, "UNKNOWN": true, "ABORTED": true, "UNIMPLEMENTED": true,
}

var geminiMessages = map[int]string{
	http.StatusUnauthorized:        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
	http.StatusForbidden:           "The caller does not have permission",
	http.StatusNotFound:            "models/unknown is not found for API version v1beta, or is not supported for generateContent.",
	http.StatusInternalServerError: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
	http.StatusServiceUnavailable:  "The model is overloaded. Please try again later.",
	http.StatusGatewayTimeout:      "The service is currently unavailable.",
}

// geminiStatus is the canonical gRPC status name Google pairs with an HTTP code.
func geminiStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// geminiRetryDelay renders RetryAfter ("12", "12s", "1.5s") as a protobuf
// Duration ("12s"); "" when there is none.
func geminiRetryDelay(s string) string {
	if s == "" {
		return ""
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return ""
		}
		d = time.Duration(secs * float64(time.Second))
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

func geminiWriteError(w http.ResponseWriter, e geminiError) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

func geminiStartSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// geminiWriteEvent writes one `data:` event, CRLF-framed as the real server
// frames it, and flushes it.
func geminiWriteEvent(w http.ResponseWriter, v any) { _ = geminiWriteEventErr(w, v) }

// geminiWriteEventErr is geminiWriteEvent, saying whether the write failed.
func geminiWriteEventErr(w http.ResponseWriter, v any) error {
	b, _ := json.Marshal(v)
	b = append(append([]byte("data: "), b...), "\r\n\r\n"...)
	_, err := w.Write(b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}
