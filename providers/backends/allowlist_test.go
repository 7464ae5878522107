package backends

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestAllowListMatchesParsedURLsNotStrings(t *testing.T) {
	al, err := NewAllowList([]string{"http://127.0.0.1:8000/v1", "https://proxy.example/openai/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url     string
		keyless bool
		want    bool
	}{
		{"http://127.0.0.1:8000/v1", false, true},
		{"http://127.0.0.1:8000/v1/", false, true},
		{"http://127.0.0.1:8000/v1/chat", false, true},
		{"HTTP://127.0.0.1:8000/v1", false, true},
		{"http://127.0.0.1:8000@evil.example/v1", false, false}, // user info: the host is evil.example
		{"http://127.0.0.1:8000.evil.example/v1", false, false},
		{"http://127.0.0.1:8001/v1", false, false},
		{"http://127.0.0.1/v1", false, false},       // port 80
		{"https://127.0.0.1:8000/v1", false, false}, // scheme
		{"http://127.0.0.1:8000/v10", false, false}, // prefix ends at a segment
		{"http://127.0.0.1:8000/v1/../admin", false, false},
		{"http://127.0.0.1:8000", false, false},
		{"https://proxy.example/openai", false, true},
		{"https://proxy.example:443/openai/v1", false, true},
		{"https://PROXY.example/openai", false, true},
		{"https://proxy.example.evil/openai", false, false},
		{"ftp://proxy.example/openai", false, false},
		{"not a url", false, false},
		// The keyless local servers' default loopback ports, for keyless
		// backends only.
		{"http://localhost:11434/v1", true, true},
		{"http://127.0.0.1:1234/anything", true, true},
		{"http://[::1]:30000/v1", true, true},
		{"http://localhost:11434/v1", false, false},
		{"http://localhost:11435/v1", true, false},
		{"http://example.com:11434/v1", true, false},
	} {
		if got := al.Allows(c.url, c.keyless); got != c.want {
			t.Errorf("Allows(%q, keyless=%v) = %v, want %v", c.url, c.keyless, got, c.want)
		}
	}
}

func TestAllowListRefusesEntriesItCannotMatch(t *testing.T) {
	for _, bad := range []string{"127.0.0.1:8000", "ftp://x/", "http://user:pw@host/", "http:///v1"} {
		if _, err := NewAllowList([]string{bad}); err == nil || !strings.Contains(err.Error(), "--allow-base-url") {
			t.Errorf("entry %q: err = %v, want a refusal naming --allow-base-url", bad, err)
		}
	}
}

// sink is a loopback server that records every request it gets, with the
// headers a key could travel in.
type sink struct {
	mu   sync.Mutex
	hits []http.Header
	srv  *httptest.Server
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, r.Header.Clone())
		s.mu.Unlock()
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// withKey counts the requests that carried the planted key in any header.
func (s *sink) withKey() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, h := range s.hits {
		for _, vs := range h {
			if strings.Contains(strings.Join(vs, " "), plantedKey) {
				n++
				break
			}
		}
	}
	return n
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.hits)
}

func TestOpenRefusesAClientNamedBaseURLThatWouldReceiveTheKey(t *testing.T) {
	sk := newSink(t)
	al, _ := NewAllowList(nil)
	env := map[string]string{"OPENAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey, "GEMINI_API_KEY": plantedKey}
	c := Config{Env: envOf(env), ClientURLs: al, Resilience: instantRetries()}
	for _, spec := range []string{"openai/gpt-5.4@" + sk.srv.URL + "/v1", "claude/claude-opus-4-6@" + sk.srv.URL, "gemini/gemini-3.1-pro-preview@" + sk.srv.URL, "grok/grok-4@" + sk.srv.URL + "/v1"} {
		_, err := c.Open(mustSpec(t, spec))
		if !errors.Is(err, ErrBaseURLNotAllowed) {
			t.Fatalf("%s: err = %v, want ErrBaseURLNotAllowed", spec, err)
		}
		if !strings.Contains(err.Error(), "--allow-base-url") || strings.Contains(err.Error(), plantedKey) {
			t.Errorf("%s: the refusal must name the flag and never the key: %v", spec, err)
		}
	}
	if sk.count() != 0 {
		t.Fatalf("the sink got %d requests", sk.count())
	}

	// Allowed with --allow-base-url: the client may reach it, but the key
	// does not go with the call.
	al2, _ := NewAllowList([]string{sk.srv.URL + "/v1"})
	c.ClientURLs = al2
	for _, spec := range []string{"openai/gpt-5.4@" + sk.srv.URL + "/v1", "claude/claude-opus-4-6@" + sk.srv.URL + "/v1/", "grok/grok-4@" + sk.srv.URL + "/v1"} {
		p, err := c.Open(mustSpec(t, spec))
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		_, _, _ = p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
	}
	if sk.count() != 3 {
		t.Fatalf("the allowed base URL got %d calls, want 3", sk.count())
	}
	if n := sk.withKey(); n != 0 {
		t.Fatalf("%d calls to a URL allowed with --allow-base-url carried the operator's key", n)
	}
	// gemini cannot call without a key: refused, naming why.
	if _, err := c.Open(mustSpec(t, "gemini/gemini-3.1-pro-preview@"+sk.srv.URL+"/v1")); err == nil || !strings.Contains(err.Error(), "only to the base URL its operator configured") {
		t.Errorf("gemini at a keyless allowed URL: %v", err)
	}
	// The backend's own configured base URL is the operator's.
	env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
	c.ClientURLs = al
	if _, err := c.Open(mustSpec(t, "openai/gpt-5.4@http://127.0.0.1:9/v1/")); err != nil {
		t.Errorf("the operator's OPENAI_BASE_URL named by a client: %v", err)
	}
	// Without ClientURLs (the CLI) a spec its command line names is the
	// operator's own.
	c.ClientURLs = nil
	cli := mustSpec(t, "openai/gpt-5.4@http://127.0.0.1:7/v1")
	cli.Grant.CommandLine = true
	if _, err := c.Open(cli); err != nil {
		t.Errorf("a CLI spec: %v", err)
	}
}

// TestProvidersNeverFollowARedirectToAnotherHost points each key-carrying
// API family at a provider that redirects to a second loopback server (another
// port, so another origin): the real SDK clients must stop there, and the
// second server must see nothing — Go would forward x-api-key and
// x-goog-api-key across hosts.
func TestProvidersNeverFollowARedirectToAnotherHost(t *testing.T) {
	sk := newSink(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, sk.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	env := map[string]string{"OPENAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey, "GEMINI_API_KEY": plantedKey, "XAI_API_KEY": plantedKey}
	for _, spec := range []string{"openai/gpt-5.4@" + redirect.URL + "/v1", "claude/claude-opus-4-6@" + redirect.URL, "gemini/gemini-3.1-pro-preview@" + redirect.URL, "grok/grok-4@" + redirect.URL + "/v1"} {
		c := Config{Env: envOf(env), Resilience: instantRetries()}
		c.Resilience.MaxAttempts = 1
		sp := mustSpec(t, spec)
		sp.Grant.CommandLine = true // the operator's: the key goes, and must not follow the redirect
		p, err := c.Open(sp)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		_, _, err = p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
		if err == nil || !strings.Contains(err.Error(), "redirected to another host") {
			t.Errorf("%s: err = %v, want the redirect refused", spec, err)
		}
	}
	if sk.count() != 0 {
		t.Fatalf("the redirect target got %d requests (headers %v)", sk.count(), sk.hits)
	}
}
