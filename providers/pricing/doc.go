// Package pricing turns normalised token usage into US dollars from an
// embedded price table (prices.json: one entry per model, each with the page
// it was taken from and the date it was checked), and wraps a provider so
// that every step reports its cost. A model the table lacks has an unknown
// cost — nil, shown as "unknown" — never 0; but a self-hosted backend's
// (vllm, sglang, lmstudio, ollama: providers.BackendInfo.SelfHosted) costs
// a known 0, as nobody bills its tokens.
//
// # The usage rule every adapter follows
//
// providers.Usage is normalised so that one formula prices every API:
//
//   - Input is every input token, cached or not. CachedInput is the part of
//     Input that was read from the provider's prompt cache.
//     OpenAI: input_tokens / prompt_tokens (they include cached_tokens).
//     Anthropic: input_tokens + cache_read_input_tokens +
//     cache_creation_input_tokens (the API reports them apart); CachedInput
//     is cache_read_input_tokens.
//     Gemini: promptTokenCount (includes cachedContentTokenCount) +
//     toolUsePromptTokenCount; CachedInput is cachedContentTokenCount.
//   - Output is every output token, reasoning included. Reasoning is the
//     part of Output that was reasoning (informational; it is not billed a
//     second time).
//     OpenAI: output_tokens / completion_tokens already include
//     reasoning_tokens. xAI reports reasoning_tokens beside
//     completion_tokens, so Output = completion + reasoning. Gemini reports
//     thoughtsTokenCount beside candidatesTokenCount, so Output =
//     candidates + thoughts. Anthropic's output_tokens include thinking.
//   - CostUSD stays nil in the adapter unless the provider reports a cost
//     itself (Claude Code's total_cost_usd); Priced fills it from the table.
//
// Cost is then (Input − CachedInput) × input + CachedInput × cached_input +
// Output × output, per million tokens, at the long-context rates when Input
// exceeds the entry's threshold. Anthropic cache writes are billed above the
// input rate; Usage has no field for them, so they are priced at the input
// rate unless the adapter sets CostUSD with CostWithCacheWrites.
//
// pricing knows nothing of any SDK, of retries or of coordination.
package pricing
