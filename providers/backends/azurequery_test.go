package backends

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAnAzureStyleBaseURLKeepsItsPathAndQuery: an OpenAI-family base URL
// with a path and a query, as an Azure-style gateway's
// (…/openai/deployments/x?api-version=2024-10-21), set as the backend's own
// variable (OPENAI_BASE_URL, GROQ_BASE_URL) or as a team file's base_url,
// is called at its path with /responses, /chat/completions or /models
// after it, and its query on every request: the models pre-flight and the
// step alike. The SDKs build a request's URL from the base URL's path and
// drop its query, so a gateway that needs api-version refused every call.
func TestAnAzureStyleBaseURLKeepsItsPathAndQuery(t *testing.T) {
	const query = "api-version=2024-10-21"
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if r.URL.Path == "/openai/deployments/x/models" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"gpt-5.4","object":"model"},{"id":"m","object":"model"}]}`))
			return
		}
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	base := srv.URL + "/openai/deployments/x?" + query
	for _, tc := range []struct {
		name, spec, envVar, path string
		teamFile                 bool
	}{
		{"OPENAI_BASE_URL", "openai/gpt-5.4", "OPENAI_BASE_URL", "/openai/deployments/x/responses", false},
		{"GROQ_BASE_URL", "groq/m", "GROQ_BASE_URL", "/openai/deployments/x/chat/completions", false},
		{"a team file's base_url", "openai/gpt-5.4@" + base, "", "/openai/deployments/x/responses", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			env := map[string]string{"OPENAI_API_KEY": plantedKey, "GROQ_API_KEY": plantedKey}
			if tc.envVar != "" {
				env[tc.envVar] = base
			}
			c := Config{Env: envOf(env), Resilience: instantRetries()}
			c.Resilience.MaxAttempts = 1
			sp := mustSpec(t, tc.spec)
			if tc.teamFile {
				sp.Grant.Operator, sp.Grant.KeyEnv = true, "OPENAI_API_KEY"
			}
			for i, err := range c.CheckModels(context.Background(), []providers.Spec{sp}) {
				if err != nil {
					t.Fatalf("pre-flight %d: %v", i, err)
				}
			}
			p, err := c.Open(sp)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if _, _, err := p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"}); err == nil {
				t.Fatal("a step the gateway refused succeeded")
			}
			mu.Lock()
			defer mu.Unlock()
			want := map[string]bool{"GET /openai/deployments/x/models?" + query: false, "POST " + tc.path + "?" + query: false}
			for _, g := range got {
				if _, ok := want[g]; !ok {
					t.Errorf("the gateway was called at %s", g)
				}
				want[g] = true
			}
			for w, seen := range want {
				if !seen {
					t.Errorf("the gateway was never called at %s (calls: %q)", w, got)
				}
			}
		})
	}
}
