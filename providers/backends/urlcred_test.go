package backends

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestABaseURLsUserinfoNeverReachesAStepsError calls each API family at an
// operator's base URL that carries a credential in its user info — a token
// as the user name (https://TOKEN@gateway/v1, as many gateways and proxies
// take it) or a user and password — on a port where nothing answers. The
// transport's error quotes the request's URL; Go hides only a password
// there, so a token given as the user name went into the step's error, and
// from it into the ledger and every client's view of the session. No part
// of the user info may appear in any layer of the error.
func TestABaseURLsUserinfoNeverReachesAStepsError(t *testing.T) {
	root := strings.TrimSuffix(strings.TrimPrefix(closedURL(t), "http://"), "/v1")
	const token, password = "dummy-gateway-token-not-a-key", "dummy-password-not-a-key"
	for _, spec := range []string{
		"openai/gpt-5.4@http://" + token + "@" + root + "/v1",
		"openai/gpt-5.4@http://someone:" + password + "@" + root + "/v1",
		"claude/claude-opus-4-6@http://" + token + "@" + root,
		"gemini/gemini-3.1-pro-preview@http://" + token + "@" + root,
		"grok/grok-4@http://" + token + "@" + root + "/v1",
		"vllm/m@http://" + token + "@" + root + "/v1",
	} {
		env := map[string]string{"OPENAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey, "GEMINI_API_KEY": plantedKey, "XAI_API_KEY": plantedKey}
		c := Config{Env: envOf(env), Resilience: instantRetries()}
		c.Resilience.MaxAttempts = 1
		sp := mustSpec(t, spec)
		sp.Grant.CommandLine = true // the operator's own URL
		p, err := c.Open(sp)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		_, _, err = p.Step(context.Background(), providers.Request{System: "s", Prompt: "u"})
		if err == nil {
			t.Fatalf("a step at a dead port succeeded")
		}
		for _, m := range everyMessage(err) {
			if strings.Contains(m, token) || strings.Contains(m, password) {
				t.Errorf("the error of a step at a base URL with user info shows it: %s", m)
				break
			}
		}
	}
}

// retryWatch records the errors a step's live view hears of its retries.
type retryWatch struct {
	mu   sync.Mutex
	errs []string
}

func (w *retryWatch) Text(string) {}
func (w *retryWatch) Retry(_ time.Duration, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errs = append(w.errs, err.Error())
	}
}

// TestARetryTheLiveViewHearsOfCarriesNoCredential retries a Gemini step at
// a dead port of an operator's base URL with a gateway token as its user
// name. The retry layer tells the request's watcher (the live view that
// every subscriber of the session — the web view, MCP progress — hears)
// of each retry with the error as the adapter returned it, inside the layer
// that masks credentials (keys.Redact), so the watcher heard what the step's
// error itself no longer shows.
func TestARetryTheLiveViewHearsOfCarriesNoCredential(t *testing.T) {
	root := strings.TrimSuffix(strings.TrimPrefix(closedURL(t), "http://"), "/v1")
	const token = "dummy-gateway-token-not-a-key"
	env := map[string]string{"GEMINI_API_KEY": plantedKey}
	c := Config{Env: envOf(env), Resilience: instantRetries()}
	c.Resilience.MaxAttempts = 2
	sp := mustSpec(t, "gemini/gemini-3.1-pro-preview@http://"+token+"@"+root)
	sp.Grant.CommandLine = true
	p, err := c.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	w := &retryWatch{}
	if _, _, err := p.Step(context.Background(), providers.Request{System: "s", Prompt: "u", Watch: w}); err == nil {
		t.Fatal("a step at a dead port succeeded")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) == 0 {
		t.Fatal("the watcher heard of no retry")
	}
	for _, e := range w.errs {
		if strings.Contains(e, token) || strings.Contains(e, plantedKey) {
			t.Errorf("the live view heard a retry's error with a credential: %s", e)
		}
	}
}
