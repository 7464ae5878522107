package chatapi

import "encoding/json"

// request is a chat completion request. Fields an OpenAI client sends that
// a team has no use for (temperature, max_tokens, tools offered, …) are
// read past: the team file sets the agents' own. Those that change what
// the client is promised back (N, ResponseFormat, ToolChoice) are read to
// refuse what a team cannot keep (unkept).
type request struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
	Stream   bool      `json:"stream"`
	// N choices, a content format, a tool call: a team gives one answer,
	// in free text.
	N              *int            `json:"n"`
	ResponseFormat *responseFormat `json:"response_format"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	// SessionID (an extension field) names the session: a new one gets this
	// id, an existing one with the same task is resumed or joined. A
	// request that names one is not cancelled when its client goes away —
	// the client comes back with the same id for the answer.
	SessionID string `json:"massgen_session_id"`
}

// responseFormat is the format asked of the content: "text" (the default),
// "json_object" or "json_schema".
type responseFormat struct {
	Type string `json:"type"`
}

// message is one turn of the conversation; content is a string, null, or an
// array of parts of which only text ones are taken.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentPart is one part of an array content.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// completion is a chat.completion, or one chat.completion.chunk of a stream.
type completion struct {
	ID       string    `json:"id"`
	Object   string    `json:"object"`
	Created  int64     `json:"created"`
	Model    string    `json:"model"`
	Choices  []choice  `json:"choices"`
	Usage    *usage    `json:"usage,omitempty"`
	Metadata *metadata `json:"massgen_metadata,omitempty"`
}

type choice struct {
	Index        int      `json:"index"`
	Message      *turn    `json:"message,omitempty"`
	Delta        *turn    `json:"delta,omitempty"`
	FinishReason *string  `json:"finish_reason"`
	Logprobs     *float64 `json:"logprobs"` // always null; clients expect the key
}

// turn is the assistant's message (or a chunk's delta): the final answer as
// content, the coordination trace as reasoning_content (MassGen's field).
type turn struct {
	Role             string `json:"role,omitempty"`
	Content          string `json:"content,omitempty"`
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// usage is the team's tokens in OpenAI's names.
type usage struct {
	PromptTokens            int64          `json:"prompt_tokens"`
	CompletionTokens        int64          `json:"completion_tokens"`
	TotalTokens             int64          `json:"total_tokens"`
	PromptTokensDetails     promptDetails  `json:"prompt_tokens_details"`
	CompletionTokensDetails completionInfo `json:"completion_tokens_details"`
}

type promptDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type completionInfo struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// metadata is the extension object MassGen's serve adds
// (massgen_metadata), with our session's facts: the cost is here, since
// OpenAI's usage has no field for it.
type metadata struct {
	SessionID     string   `json:"session_id"`
	Team          string   `json:"team,omitempty"`
	Status        string   `json:"status,omitempty"`
	Winner        string   `json:"winner,omitempty"`
	WinnerModel   string   `json:"winner_model,omitempty"`
	HowChosen     string   `json:"how_chosen,omitempty"`
	StopReason    string   `json:"stop_reason,omitempty"`
	CostUSD       *float64 `json:"cost_usd,omitempty"`
	CostEstimated bool     `json:"cost_estimated,omitempty"`
	Steps         int      `json:"steps,omitempty"`
	Seconds       float64  `json:"duration_seconds,omitempty"`
}

// model is one entry of GET /v1/models.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type modelList struct {
	Object string  `json:"object"`
	Data   []model `json:"data"`
}

// apiError is OpenAI's error object.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}
