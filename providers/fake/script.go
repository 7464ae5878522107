package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// answerArgs are a new_answer reply's arguments: content, and files when the
// script gives some.
func answerArgs(r Reply) map[string]any {
	args := map[string]any{"content": r.Content}
	if len(r.Files) > 0 {
		files := make([]any, len(r.Files))
		for i, f := range r.Files {
			files[i] = map[string]any{"path": f.Path, "content": f.Content}
		}
		args["files"] = files
	}
	return args
}

// Kinds of scripted reply.
const (
	ReplyNewAnswer     = "new_answer"     // a new_answer tool call with Content
	ReplyVote          = "vote"           // a vote tool call for Agent with Reason
	ReplyText          = "text"           // plain text, no tool call
	ReplyToolCall      = "tool_call"      // a call of any tool: Tool with Input (e.g. an MCP tool of the client under test)
	ReplyWebSearch     = "web_search"     // the API's own web search runs for Query, then a new_answer with Content (Responses, Anthropic, Gemini); at Anthropic, a call of Tool with Input instead when Tool is set
	ReplyPausedSearch  = "paused_search"  // Anthropic only: the API's web search runs for Query and the turn pauses (stop_reason pause_turn), to be continued by sending the reply back
	ReplyMalformedArgs = "malformed_args" // a tool call whose arguments are not valid JSON
	ReplyStatus        = "status"         // an HTTP error: Status, RetryAfter, Error*
	ReplyStreamError   = "stream_error"   // starts streaming, then an error event
	ReplyStall         = "stall"          // starts streaming, then sends nothing until the client gives up
	ReplyCut           = "cut"            // streams Content as text, then the connection drops: no end of the reply, no final usage
	ReplyFlood         = "flood"          // streams text without end, until the client hangs up
)

// Reply is one scripted response. Each server renders it in its own wire
// format (streaming or not, as the client asked).
type Reply struct {
	Kind    string `json:"kind"`
	Content string `json:"content,omitempty"` // new_answer content, or text
	// Files go with a new_answer call (its files argument).
	Files  []providers.AnswerFile `json:"files,omitempty"`
	Agent  string                 `json:"agent,omitempty"` // vote target (agentN)
	Reason string                 `json:"reason,omitempty"`
	// ReplyToolCall: the tool's name as the client offers it and its input.
	Tool  string          `json:"tool,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ReplyWebSearch: what the server-side search looked for.
	Query string `json:"query,omitempty"`

	// ReplyStatus / ReplyStreamError: the status code (e.g. 429, 500, 529,
	// 401) and the provider's error fields; RetryAfter is sent as the
	// Retry-After header (seconds) or as Gemini's retryDelay.
	Status       int    `json:"status,omitempty"`
	RetryAfter   string `json:"retry_after,omitempty"`
	ErrorType    string `json:"error_type,omitempty"`    // e.g. "rate_limit_error", "overloaded_error", "insufficient_quota"
	ErrorCode    string `json:"error_code,omitempty"`    // e.g. "insufficient_quota", "RESOURCE_EXHAUSTED"
	ErrorMessage string `json:"error_message,omitempty"` // human text

	// Usage reported with the reply; zero fields are filled from text length.
	Usage *Usage `json:"usage,omitempty"`
	// RunningUsage reports the usage so far while the reply streams, before
	// its final report: Chat Completions in every chunk (vLLM's
	// stream_options.continuous_usage_stats, and some gateways unasked),
	// Anthropic in a message_delta (stop_reason null) after each piece of a
	// cut reply and each block of any other (the Messages API allows more than
	// one). Each counts the prompt and a token of output for every piece sent,
	// far below what the text is worth. Gemini's chunks always carry it.
	RunningUsage bool `json:"running_usage,omitempty"`
	// Delay before the reply starts (latency).
	Delay Duration `json:"delay,omitempty"`
}

// Usage is the token usage a fake reports.
type Usage struct {
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	Output      int64 `json:"output"`
	Reasoning   int64 `json:"reasoning"`
	// CacheWrite is the part of Input written to a prompt cache (Anthropic's
	// cache_creation_input_tokens); servers without cache writes ignore it.
	CacheWrite int64 `json:"cache_write,omitempty"`
	// Zero reports every count as zero, as OpenAI-compatible local servers
	// often do for a reply they completed, where zero fields are otherwise
	// filled from text length.
	Zero bool `json:"zero,omitempty"`
}

// Duration is a time.Duration that reads "300ms" in JSON.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n float64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("a duration is a string like \"300ms\": %w", err)
		}
		*d = Duration(time.Duration(n * float64(time.Second)))
		return nil
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Call is what the default policy and the recorder know of one request.
type Call struct {
	Format   string          // chat, responses, anthropic, gemini
	Model    string          // the model named in the request
	Stream   bool            // the client asked for a stream
	Tools    []string        // workflow tool names offered
	VoteEnum []string        // the vote tool's agent_id enum
	Body     json.RawMessage // the raw request body
	Header   http.Header
	// Images are the images the request carried in its format's wire
	// shape, each checked as the API checks it (images.go).
	Images     []CallImage
	imageChars int // their base64 text in Body, which costs no tokens
}

// Script holds per-model queues of replies. It is safe for concurrent use.
type Script struct {
	mu      sync.Mutex
	queues  map[string][]Reply
	always  map[string]Reply
	calls   []Call
	Default func(c Call) Reply // used when a model's queue is empty; nil → DefaultReply
	own     *Usage             // SetOwnUsage's

	listed   map[string][]string // API → the models its list holds (models.go)
	listFail map[string]Reply    // API → the error its models list answers with
	listings int                 // models-list requests answered
}

// NewScript returns an empty script.
func NewScript() *Script {
	return &Script{queues: map[string][]Reply{}, always: map[string]Reply{}}
}

// Add queues replies for a model, played in order, one per request.
func (s *Script) Add(model string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queues[model] = append(s.queues[model], replies...)
}

// Always makes a model give the same reply to every request once its queue
// is empty (e.g. a provider that keeps failing).
func (s *Script) Always(model string, r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always[model] = r
}

// SetOwnUsage sets the usage of the replies a CLI fake makes up itself,
// which no script plays (Codex's tool search, the final message once a
// workflow call returned); unset, they count it from text length. With
// Usage{Zero: true} beside zero scripted replies, a CLI's whole turn meets
// a server that reports no usage.
func (s *Script) SetOwnUsage(u Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.own = &u
}

func (s *Script) ownUsage() *Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.own
}

// Calls returns every request seen so far.
func (s *Script) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Next records a call and returns the reply to play for it.
func (s *Script) Next(c Call) Reply {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	if q := s.queues[c.Model]; len(q) > 0 {
		s.queues[c.Model] = q[1:]
		s.mu.Unlock()
		return q[0]
	}
	if r, ok := s.always[c.Model]; ok {
		s.mu.Unlock()
		return r
	}
	def := s.Default
	s.mu.Unlock()
	if def == nil {
		def = DefaultReply
	}
	return def(c)
}

// DefaultReply lets a team of fakes agree: vote for the first name offered
// when voting is possible, otherwise answer.
func DefaultReply(c Call) Reply {
	for _, t := range c.Tools {
		if w, _ := workflowName(t); w == "vote" && len(c.VoteEnum) > 0 {
			return Reply{Kind: ReplyVote, Agent: c.VoteEnum[0], Reason: "fake " + c.Model + " agrees with " + c.VoteEnum[0]}
		}
	}
	return Reply{Kind: ReplyNewAnswer, Content: "Fake answer from " + c.Model + ".\nAnswer: 42"}
}

// ScriptFile is the JSON form of a script, for running massgen-mcp against
// fakes: {"models": {"gpt-5-mini": [replies…]}, "always": {"m": reply}}.
type ScriptFile struct {
	Models map[string][]Reply `json:"models"`
	Always map[string]Reply   `json:"always"`
	// Listing replaces what an API's models list holds: {"openai": [ids…],
	// "anthropic": […], "gemini": […]}.
	Listing map[string][]string `json:"listing,omitempty"`
}

// Load adds a script file's replies to a script.
func (s *Script) Load(f ScriptFile) {
	for m, rs := range f.Models {
		s.Add(m, rs...)
	}
	for m, r := range f.Always {
		s.Always(m, r)
	}
	for api, ids := range f.Listing {
		s.SetModels(api, ids...)
	}
}
