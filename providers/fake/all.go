package fake

import (
	"net/http"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// NewAll serves every fake on one address, routing by the path each SDK
// appends to its base URL: …/v1/messages to Anthropic, …:generateContent and
// …:streamGenerateContent to Gemini, everything else (chat/completions,
// responses) to OpenAI; a models list by the header or path only one SDK
// sends. Point every backend's base URL at it with BaseURLs.
func NewAll(s *Script) http.Handler {
	openai, anthropic, gemini := NewOpenAI(s), NewAnthropic(s), NewGemini(s)
	codex, geminiCLI := NewCodex(s), newGeminiCLI(gemini)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimSuffix(r.URL.Path, "/")
		switch {
		case isCodex(r): // the coding-agent CLIs reach their tools differently (cliagents.go)
			codex.ServeHTTP(w, r)
		case isGeminiCLI(r):
			geminiCLI.ServeHTTP(w, r)
		case isModelsList(r) && r.Header.Get("Anthropic-Version") != "":
			anthropic.ServeHTTP(w, r) // Anthropic's list shares OpenAI's path; its SDK always sends its version
		case isModelsList(r) && strings.HasSuffix(p, "/v1beta/models"):
			gemini.ServeHTTP(w, r)
		case strings.HasSuffix(p, "/v1/messages"):
			anthropic.ServeHTTP(w, r)
		case strings.Contains(p, ":generateContent") || strings.Contains(p, ":streamGenerateContent"):
			gemini.ServeHTTP(w, r)
		default:
			openai.ServeHTTP(w, r)
		}
	})
}

// BaseURLs maps every API backend's base-URL variable to a NewAll server at
// root (e.g. "http://127.0.0.1:4010"), in the form each SDK expects.
func BaseURLs(root string) map[string]string {
	root = strings.TrimSuffix(root, "/")
	env := map[string]string{}
	for _, b := range providers.Backends() {
		if b.BaseURLEnv == "" {
			continue
		}
		switch b.Transport {
		case providers.TransportMessages, providers.TransportGenerateContent:
			env[b.BaseURLEnv] = root // the SDK adds /v1/messages or /v1beta/models/…
		case providers.TransportResponses, providers.TransportChatCompletions:
			env[b.BaseURLEnv] = root + "/v1"
		}
	}
	return env
}
