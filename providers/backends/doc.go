// Package backends opens a Provider for a parsed model spec: the one place
// that knows every backend package. It resolves the backend's key and base
// URL (package keys), builds the API adapter, and stacks pricing, retries
// with the backend's circuit breaker, and key masking on top. It also tells
// which backends are usable here, what the default team is, and which model
// a single call no one named a model for uses (FirstModel).
//
// backends knows nothing of coordination, and nothing of any wire format:
// that is each adapter's business.
package backends
