// Package gemini is the Provider for Google's Gemini API (backend "gemini"),
// built on google.golang.org/genai — the official unified Go SDK. The design
// card named github.com/google/generative-ai-go, which Google deprecated: its
// support ended on 2025-08-31 and its README points to genai.
//
// One Step is one streamed generateContent call (streamGenerateContent?alt=sse):
// the workflow tools become function declarations (their JSON schemas passed
// as parametersJsonSchema), function calling runs in mode ANY restricted to
// the offered names, System becomes the system instruction, and usage comes
// from the last chunk's usageMetadata. A reply with text and no function call
// is parsed for a workflow call written as JSON.
//
// The client is built hermetically: API key, backend (Gemini API, never
// Vertex), base URL and HTTP client are all explicit, so no GOOGLE_* or
// GEMINI_* variable leaks in; SDK retries and automatic continuation stay
// off, because the providers layer owns retries and the circuit breaker.
//
// Corrective retries: Request.History replays every refused attempt as the
// model turn it was — its parts kept verbatim in Action.Raw, thought
// signatures included, since Gemini 3 refuses a function-calling turn whose
// signatures are missing — followed by a user turn of functionResponse parts
// (one per call) carrying the problem, or the problem as text when the
// attempt had no function call.
//
// Reasoning effort maps per model family:
//
//	effort   gemini-2.5 pro   gemini-2.5 flash / flash-lite   gemini-3+ flash / flash-lite   gemini-3 pro   gemini-3.1+ pro
//	minimal  budget 128       budget 0 (thinking off)         level MINIMAL                  LOW            LOW
//	low      budget 1024      budget 1024                     LOW                            LOW            LOW
//	medium   budget 8192      budget 8192                     MEDIUM                         HIGH           MEDIUM
//	high     budget 32768     budget 24576                    HIGH                           HIGH           HIGH
//
// Gemini 3 takes thinkingLevel (thinkingBudget is only tolerated), Pro models
// cannot turn thinking off, and Gemini 3 Pro knows only LOW and HIGH. Older
// models (gemini-2.0, 1.5, gemma, unknown names) get no thinking config, nor
// does an empty effort (the model's own default). On 2.5 models
// maxOutputTokens includes the thinking budget.
//
// Errors are providers.Error values: 429 RESOURCE_EXHAUSTED is rate_limit
// with RetryAfter from google.rpc.RetryInfo (or the message's "retry in"),
// unless a QuotaFailure or the message names a per-day quota, which is quota;
// API_KEY_INVALID, 401 and 403 are auth; 503 UNAVAILABLE is overloaded; a
// context deadline is timeout; anything else is provider. The API key never
// appears in an error. Usage.CostUSD stays nil: pricing is the providers
// layer's job.
//
// gemini knows the providers package and genai; nothing of coordination.
package gemini
