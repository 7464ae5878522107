package backends

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestBackendStatusShowsNoCredentialOfItsBaseURL: an operator's base URL
// may carry its gateway's credential as the user name alone
// (http://TOKEN@gpu-box:8000/v1, which Go's URL.Redacted keeps: it hides a
// password only) or in a query (?token=…). A backend's status — its
// base_url and, for a self-hosted server that does not answer, list_backends'
// "no server at …" note, which every tenant reads — shows neither
// (providers.ShowSpec's rule for a team file's base URL).
func TestBackendStatusShowsNoCredentialOfItsBaseURL(t *testing.T) {
	const token, query = "dummy-gateway-token-not-a-key", "dummy-query-token-not-a-key"
	root := strings.TrimPrefix(closedURL(t), "http://")
	env := map[string]string{
		"VLLM_BASE_URL":   "http://" + token + "@" + root,
		"SGLANG_BASE_URL": "http://" + root + "?token=" + query,
		"OPENAI_API_KEY":  plantedKey,
		"OPENAI_BASE_URL": "http://" + token + "@" + root + "?token=" + query,
	}
	c := Config{Env: envOf(env), ProbeTimeout: time.Second}
	for _, s := range c.Usable(context.Background()) {
		for _, text := range []string{s.BaseURL, s.Why} {
			if strings.Contains(text, token) || strings.Contains(text, query) {
				t.Errorf("%s's status shows its base URL's credential: base_url %q, why %q", s.Name, s.BaseURL, s.Why)
				break
			}
		}
	}
}
