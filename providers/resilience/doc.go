// Package resilience is the one retry layer between coordination and a model
// API: exponential backoff with jitter for transient failures (rate limits,
// overload, 5xx, dropped connections), honouring the provider's Retry-After,
// and a circuit breaker per backend shared by every agent that uses it.
// Adapters turn their SDK's own retries off so that a call is never retried
// by two layers.
//
// resilience decides only from a *providers.Error's class, status and retry
// delay; it knows no SDK, no wire format, no key and nothing of coordination.
package resilience
