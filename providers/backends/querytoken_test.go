package backends

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestABaseURLsTokenQueryReachesTheProxy: docs/DESIGN.md ("A team file's
// base URL credentials") says a team file's base_url may carry its proxy's
// credential as user info "or a ?token= query — and they keep working". A
// proxy that takes its token in the query must receive it on every call.
func TestABaseURLsTokenQueryReachesTheProxy(t *testing.T) {
	const token = "dummyQUERYtokenNotAKey"
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.String())
		mu.Unlock()
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	for _, spec := range []string{
		"openai/gpt-5.4@" + srv.URL + "/v1?token=" + token,
		"vllm/m@" + srv.URL + "/v1?token=" + token,
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		env := map[string]string{"OPENAI_API_KEY": plantedKey}
		c := Config{Env: envOf(env), Resilience: instantRetries()}
		c.Resilience.MaxAttempts = 1
		sp := mustSpec(t, spec)
		sp.Grant.CommandLine = true // the operator's own URL
		p, err := c.Open(sp)
		if err != nil {
			t.Fatalf("%s: open: %v", spec, err)
		}
		_, _, _ = p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
		mu.Lock()
		if len(got) == 0 {
			t.Errorf("%s: the proxy was not called", spec)
		}
		for _, u := range got {
			if !strings.Contains(u, "token="+token) {
				t.Errorf("%s: the proxy was called at %s, without the base URL's token", spec, u)
			}
		}
		mu.Unlock()
	}
}
