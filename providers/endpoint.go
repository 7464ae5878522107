package providers

import "net/http"

// Endpoint is everything an API adapter needs to reach one model: the
// backends package resolves it (spec, environment, .env files) and hands it
// to the adapter's constructor, so adapters never read the environment
// themselves.
type Endpoint struct {
	Backend string // e.g. "openai", "grok", "azure_openai"
	Model   string
	// BaseURL is resolved: the spec's @url, else the backend's BASE_URL
	// variable, else its default; "" means the SDK's own default.
	BaseURL string
	// APIKey is resolved; "" for local servers. It must never appear in an
	// error, a log line or anything stored.
	APIKey string
	// APIVersion is azure_openai's OPENAI_API_VERSION; "" elsewhere.
	APIVersion string
	// HTTPClient is nil for a default client; tests pass their own.
	HTTPClient *http.Client
}
