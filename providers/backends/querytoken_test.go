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
// proxy that takes its token in the query must receive it on every call, in
// every API family that takes a base URL, beside the query the SDK writes
// itself (Gemini's alt=sse, Azure's api-version); and the step's error (the
// proxy answers 401) must not show it.
func TestABaseURLsTokenQueryReachesTheProxy(t *testing.T) {
	const token = "dummy-query-token-not-a-key"
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.String())
		mu.Unlock()
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		spec string
		also string // a parameter the SDK adds itself, which must stay
	}{
		{spec: "openai/gpt-5.4@" + srv.URL + "/v1?token=" + token},
		{spec: "vllm/m@" + srv.URL + "/v1?token=" + token},
		{spec: "grok/grok-4@" + srv.URL + "/v1?token=" + token},
		{spec: "azure_openai/dep@" + srv.URL + "?token=" + token, also: "api-version=2024-10-21"},
		{spec: "claude/claude-opus-4-6@" + srv.URL + "?token=" + token},
		{spec: "gemini/gemini-3.1-pro-preview@" + srv.URL + "?token=" + token, also: "alt=sse"},
	} {
		spec := tc.spec
		mu.Lock()
		got = nil
		mu.Unlock()
		env := map[string]string{"OPENAI_API_KEY": plantedKey, "XAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey,
			"GEMINI_API_KEY": plantedKey, "AZURE_OPENAI_API_KEY": plantedKey, "OPENAI_API_VERSION": "2024-10-21"}
		c := Config{Env: envOf(env), Resilience: instantRetries()}
		c.Resilience.MaxAttempts = 1
		sp := mustSpec(t, spec)
		sp.Grant.CommandLine = true // the operator's own URL
		p, err := c.Open(sp)
		if err != nil {
			t.Fatalf("%s: open: %v", spec, err)
		}
		_, _, err = p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
		if err == nil {
			t.Fatalf("%s: a step the proxy refused succeeded", spec)
		}
		for _, m := range everyMessage(err) {
			if strings.Contains(m, token) {
				t.Errorf("%s: the step's error shows the base URL's token: %s", spec, m)
				break
			}
		}
		mu.Lock()
		if len(got) == 0 {
			t.Errorf("%s: the proxy was not called", spec)
		}
		for _, u := range got {
			if !strings.Contains(u, "token="+token) {
				t.Errorf("%s: the proxy was called at %s, without the base URL's token", spec, u)
			}
			if tc.also != "" && !strings.Contains(u, tc.also) {
				t.Errorf("%s: the proxy was called at %s, without the SDK's own %s", spec, u, tc.also)
			}
			if strings.Contains(u, "token="+token+"/") {
				t.Errorf("%s: the proxy was called at %s, the base URL's query inside the path", spec, u)
			}
		}
		mu.Unlock()
	}
}

// TestABaseURLsQueryStaysOutOfATransportError: a step at a base URL with a
// ?token= query where nothing answers fails in the transport, whose error
// quotes the request's URL; the token the request carried must not be in it.
func TestABaseURLsQueryStaysOutOfATransportError(t *testing.T) {
	const token = "dummy-query-token-not-a-key"
	dead := closedURL(t)
	root := strings.TrimSuffix(dead, "/v1")
	for _, spec := range []string{
		"openai/gpt-5.4@" + dead + "?token=" + token,
		"vllm/m@" + dead + "?token=" + token,
		"claude/claude-opus-4-6@" + root + "?token=" + token,
		"gemini/gemini-3.1-pro-preview@" + root + "?token=" + token,
	} {
		env := map[string]string{"OPENAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey, "GEMINI_API_KEY": plantedKey}
		c := Config{Env: envOf(env), Resilience: instantRetries()}
		c.Resilience.MaxAttempts = 1
		sp := mustSpec(t, spec)
		sp.Grant.CommandLine = true
		p, err := c.Open(sp)
		if err != nil {
			t.Fatalf("%s: open: %v", spec, err)
		}
		_, _, err = p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
		if err == nil {
			t.Fatalf("%s: a step at a dead port succeeded", spec)
		}
		for _, m := range everyMessage(err) {
			if strings.Contains(m, token) {
				t.Errorf("%s: the transport error shows the base URL's token: %s", spec, m)
				break
			}
		}
	}
}
