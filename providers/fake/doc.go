// Package fake holds protocol-faithful fake provider servers — OpenAI Chat
// Completions and Responses, Anthropic Messages, Gemini generateContent —
// that speak each API's real wire format, streaming included, so the real SDK
// clients can be pointed at them in tests, benchmarks and offline runs.
//
// Every server plays a per-model script of replies (an answer, a vote, plain
// text, malformed arguments, an HTTP error, an error mid-stream, a stall, a
// connection cut mid-reply, an endless reply) and
// falls back to a default policy that lets a team of fakes reach consensus.
// fake knows the providers package only for tool names; nothing of
// coordination.
package fake
