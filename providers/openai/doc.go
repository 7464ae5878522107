// Package openai adapts the OpenAI family of APIs to providers.Provider
// through github.com/openai/openai-go/v3: NewResponses speaks the Responses
// API (the openai backend); NewChat speaks Chat Completions (grok,
// openrouter, together, groq, cerebras, fireworks, deepseek, azure_openai and
// the local vllm, sglang, lmstudio and ollama servers).
//
// Every step is one streamed call, so the step's context deadline and
// cancellation cut it off mid-generation. The workflow tools go out as
// function tools with tool_choice "required", System as the system message
// (Responses: instructions), and each refused attempt in Request.History is
// replayed as a conversation: the model's tool calls answered by tool results
// carrying the problem, or its text followed by a user message with the
// problem. A server that turns the tools down (a 4xx saying tools or
// tool_choice are unsupported) gets tool_choice "auto", then the tools
// described in text with the JSON reply parsed (providers.ToolsAsText and
// providers.ParseTextCallsFor); the adapter remembers what the server took.
// Options.TextTools starts in text mode.
//
// Reasoning models (OpenAI gpt-5*, o-series, codex; xAI grok-3-mini) get a
// reasoning effort, medium unless the request names one; OpenAI's reasoning
// models and deepseek-reasoner get no temperature (OpenAI's reject it).
// Usage is normalised: Input includes cached input, Output includes
// reasoning (xAI reports reasoning beside completion_tokens, so it is
// added). Cost is left nil for the pricing layer.
//
// Failures come back as *providers.Error with a class, the HTTP status and
// the Retry-After the server asked for; a stream's mid-reply error is
// classified the same way. Clients are built hermetically — the SDK's
// services are constructed directly, so OPENAI_* variables never reach a
// request — with the SDK's own retries off: retries, the circuit breaker,
// keys and pricing belong to the layers around this package. No key ever
// appears in an error.
//
// openai knows nothing of coordination, sessions or other providers.
package openai
