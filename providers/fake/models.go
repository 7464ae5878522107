package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// APIs whose models list a script can set.
const (
	ListOpenAI    = "openai"    // GET {base}/models of every OpenAI-compatible fake
	ListAnthropic = "anthropic" // GET /v1/models with after_id/limit paging
	ListGemini    = "gemini"    // GET /v1beta/models with pageToken/pageSize paging
)

// DefaultModels are what each fake lists when a script sets no list: the
// models the project's defaults and tests name, as each API spells them
// (Anthropic's dated ids, which their aliases match). Every model a script
// has replies queued for is listed too.
var DefaultModels = map[string][]string{
	ListOpenAI: {"gpt-5.5", "gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.2", "gpt-5.1", "gpt-5", "gpt-5-mini", "gpt-5-nano",
		"gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o4-mini", "gpt-oss-120b",
		"grok-4", "grok-4-0709", "grok-4.20-0309-reasoning", "grok-4-1-fast-reasoning", "grok-4-1-fast-non-reasoning", "grok-code-fast-1",
		"deepseek-chat", "deepseek-reasoner", "llama3.1:8b", "qwen", "Qwen/Qwen3-8B"},
	ListAnthropic: {"claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5-20251001", "claude-opus-4-5-20251101",
		"claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-sonnet-4-20250514", "claude-opus-4-20250514"},
	ListGemini: {"gemini-3.1-pro-preview", "gemini-3-pro-preview", "gemini-3-flash-preview", "gemini-2.5-pro", "gemini-2.5-flash",
		"gemini-2.5-flash-lite", "gemini-flash-latest", "text-embedding-004"},
}

// SetModels replaces what one API's fake lists (ListOpenAI, ListAnthropic,
// ListGemini).
func (s *Script) SetModels(api string, ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listed == nil {
		s.listed = map[string][]string{}
	}
	s.listed[api] = append([]string{}, ids...)
}

// FailModels makes one API's models list answer with an error reply (a
// ReplyStatus: 401 for a refused key, 500, …).
func (s *Script) FailModels(api string, r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listFail == nil {
		s.listFail = map[string]Reply{}
	}
	s.listFail[api] = r
}

// models returns what an API lists, or the error reply to play instead.
func (s *Script) models(api string) ([]string, *Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listings++
	if r, ok := s.listFail[api]; ok {
		return nil, &r
	}
	if ids, ok := s.listed[api]; ok {
		return append([]string{}, ids...), nil
	}
	ids := append([]string{}, DefaultModels[api]...)
	for m := range s.queues {
		ids = append(ids, m)
	}
	for m := range s.always {
		ids = append(ids, m)
	}
	slices.Sort(ids[len(DefaultModels[api]):])
	return slices.Compact(ids), nil
}

// Listings counts the models-list requests every fake of this script has
// answered.
func (s *Script) Listings() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listings
}

// isModelsList tells whether a request asks for a models list.
func isModelsList(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(strings.TrimSuffix(r.URL.Path, "/"), "/models")
}

// oaiListModels answers GET {base}/models: OpenAI's list object, one page.
func oaiListModels(w http.ResponseWriter, r *http.Request, s *Script) {
	ids, fail := s.models(ListOpenAI)
	if fail != nil {
		oaiWriteStatus(w, r, *fail)
		return
	}
	data := make([]map[string]any, len(ids))
	for i, id := range ids {
		data[i] = map[string]any{"id": id, "object": "model", "created": 1735689600 + i, "owned_by": "fake"}
	}
	oaiWriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// pageOf cuts a page out of a list: from the item after `after` (by value)
// or at offset `from`, at most n items (clamped to 1..max, default def).
func pageOf(ids []string, start int, limit string, def, maxN int) (page []string, more bool) {
	n := def
	if v, err := strconv.Atoi(limit); err == nil {
		n = min(max(v, 1), maxN)
	}
	start = min(max(start, 0), len(ids))
	end := min(start+n, len(ids))
	return ids[start:end], end < len(ids)
}

// listModels answers Anthropic's GET /v1/models: limit (default 20, at
// most 1000) and after_id paging, has_more, first_id and last_id.
func (s *anthropicServer) listModels(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Api-Key") == "" && r.Header.Get("Authorization") == "" {
		s.fail(w, http.StatusUnauthorized, "authentication_error", "x-api-key header is required", "", "")
		return
	}
	ids, fail := s.script.models(ListAnthropic)
	if fail != nil {
		status, typ, msg := anthropicReplyError(*fail, http.StatusInternalServerError)
		s.fail(w, status, typ, msg, fail.ErrorCode, fail.RetryAfter)
		return
	}
	start := 0
	if after := r.URL.Query().Get("after_id"); after != "" {
		i := slices.Index(ids, after)
		if i < 0 {
			s.fail(w, http.StatusBadRequest, "invalid_request_error", "after_id "+after+" is not a model id", "", "")
			return
		}
		start = i + 1
	}
	page, more := pageOf(ids, start, r.URL.Query().Get("limit"), 20, 1000)
	data := make([]map[string]any, len(page))
	for i, id := range page {
		data[i] = map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2025-10-01T00:00:00Z"}
	}
	body := map[string]any{"data": data, "has_more": more, "first_id": nil, "last_id": nil}
	if len(page) > 0 {
		body["first_id"], body["last_id"] = page[0], page[len(page)-1]
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(anthropicJSON(body))
}

// listModels answers Gemini's GET /v1beta/models: pageSize (default 50, at
// most 1000) and pageToken paging, names as "models/…".
func (g *geminiServer) listModels(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("x-goog-api-key") == "" && r.URL.Query().Get("key") == "" {
		geminiWriteError(w, geminiError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED",
			Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."})
		return
	}
	ids, fail := g.script.models(ListGemini)
	if fail != nil {
		geminiWriteError(w, geminiReplyError(*fail, http.StatusInternalServerError))
		return
	}
	start := 0
	if tok := r.URL.Query().Get("pageToken"); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "page-"))
		if err != nil {
			geminiWriteError(w, geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: fmt.Sprintf("Invalid page token %q.", tok)})
			return
		}
		start = n
	}
	page, more := pageOf(ids, start, r.URL.Query().Get("pageSize"), 50, 1000)
	models := make([]map[string]any, len(page))
	for i, id := range page {
		methods := []string{"generateContent", "countTokens"}
		if strings.HasPrefix(id, "text-embedding") {
			methods = []string{"embedContent"}
		}
		models[i] = map[string]any{"name": "models/" + id, "version": "001", "displayName": id,
			"inputTokenLimit": 1048576, "outputTokenLimit": 65536, "supportedGenerationMethods": methods}
	}
	body := map[string]any{"models": models}
	if more {
		body["nextPageToken"] = fmt.Sprintf("page-%d", start+len(page))
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(body)
}
