// Package providers turns one coordination request into one action by calling
// a model. It holds what every backend shares: the Provider interface
// (provider.go) and Func, a function as a Provider (func.go), model specs and
// short names for every backend (spec.go), endpoints and their variables
// (endpoint.go), error classes (errors.go), Retry-After parsing, the text-mode
// tool-call convention for models without native tools (textcalls.go), and
// what the core needs of credentials without reading any: masking what is
// shaped like a key (MaskKeys) and the missing-key sentinel (keyshapes.go).
// The short-answer final value, a protocol rule the core and the sims share,
// is the leaf finalvalue. The backends live in sub-packages: openai, anthropic
// and gemini (the API adapters), sim (deterministic simulated agents), and
// around them keys (credentials), pricing (cost), resilience (retries and
// breakers), backends (the one place that opens a Provider for a spec) and
// fake (wire-faithful fake API servers for tests and offline rehearsals).
//
// providers knows nothing of sessions, ledgers or consensus: it receives a
// fully built Request and reports what the model did.
package providers
