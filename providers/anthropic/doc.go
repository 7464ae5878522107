// Package anthropic is the claude backend: one coordination step becomes one
// streamed Messages API call through the official anthropic-sdk-go client,
// and the reply becomes a providers.Action with normalised usage.
//
// What it decides, and why:
//
//   - Prompt caching. The system text (rules and persona) and the request's
//     StablePrefix (task, context, criteria) each end in a cache_control
//     breakpoint ({"type":"ephemeral"}), so an agent's later steps read them
//     from the cache; the answers block after the prefix, and any replayed
//     attempts, are never cached. The cache key also covers the tools, which
//     come first in Anthropic's cache order: a step that offers different
//     tools (a vote enum that grew) writes a new entry.
//   - Tools. The workflow tools go out in Anthropic's native format, with
//     tool_choice {"type":"tool"} when one tool is offered and {"type":"any"}
//     otherwise, parallel tool use off (a step must make exactly one call).
//   - Reasoning effort. Models with adaptive thinking (Opus/Sonnet 4.6 and
//     later, and unrecognised names) get thinking {"type":"adaptive"} with
//     output_config.effort (minimal→low, low, medium, high); older thinking
//     models (3.7 Sonnet, the 4.0–4.5 family) get {"type":"enabled"} with
//     budget_tokens minimal 1024, low 2048, medium 8192, high 16384; 3.5 and
//     older models ignore the effort. Thinking forbids a forced tool_choice
//     and any temperature, so a thinking step sends tool_choice "auto" and no
//     temperature, and a reply in plain text goes through the text fallback.
//   - max_tokens. Request.MaxOutputTokens, thinking included; 4096 when it is
//     zero, plus the effort's budget when thinking is on. A budget that would
//     not leave half of an explicit cap for the answer is cut to that half,
//     and dropped below 1024.
//   - History. A refused attempt is replayed as the conversation it was: the
//     assistant's tool_use blocks (or its text), then a user message whose
//     tool_result blocks carry the problem with is_error true. With thinking
//     on, the API would demand the attempt's signed thinking block, which an
//     Action does not keep, so the attempt is replayed as text instead.
//   - Usage. Input is every input token (uncached, cache reads and cache
//     writes), CachedInput the cache reads, Output every output token,
//     thinking included, and Reasoning the thinking part when the API reports
//     it (output_tokens_details). Cache writes are billed above the input
//     rate and Usage has no field for them, so Provider.Call reports them
//     (Result.CacheWriteInput, CacheWrite1hInput) and a call that wrote to
//     the cache comes priced with pricing.CostWithCacheWrites; every other
//     call leaves CostUSD nil for the pricing layer.
//   - Errors become *providers.Error with the class, HTTP status and
//     Retry-After. SDK retries are off; the resilience layer retries.
//
// anthropic knows nothing of coordination or of key resolution: it is handed
// a resolved providers.Endpoint and never reads the environment.
package anthropic
