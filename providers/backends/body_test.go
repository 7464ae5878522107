package backends

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAHugeErrorBodyIsNotReadWhole points each API family's real SDK at a
// provider (or an OpenAI-compatible proxy) that answers HTTP 500 with an
// endless error body. Each SDK reads an error body whole into memory before
// it looks at it, so without a bound one such answer grows the server's
// memory by whatever the provider sends until the step's deadline — every
// agent of every session on it at once. The client must stop reading after
// a bounded amount and still fail the step as the 500 it was.
func TestAHugeErrorBodyIsNotReadWhole(t *testing.T) {
	const limit = 8 << 20 // far above any real error body (and the socket's buffers), far below the body sent
	for _, tc := range []struct{ spec, path string }{
		{"openai/gpt-5.4@%s/v1", "/v1"},
		{"claude/claude-opus-4-6@%s", ""},
		{"gemini/gemini-3.1-pro-preview@%s", ""},
		{"grok/grok-4@%s/v1", "/v1"},
	} {
		var sent atomic.Int64
		done := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() { close(done) }()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			chunk := []byte(`{"error":{"message":"` + strings.Repeat("x", 1<<20))
			more := []byte(strings.Repeat("x", 1<<20))
			for sent.Load() < 5*limit {
				n, err := w.Write(chunk)
				sent.Add(int64(n))
				if err != nil {
					return
				}
				chunk = more
			}
		}))
		spec := strings.Replace(tc.spec, "%s", srv.URL, 1)
		env := map[string]string{"OPENAI_API_KEY": plantedKey, "ANTHROPIC_API_KEY": plantedKey, "GEMINI_API_KEY": plantedKey, "XAI_API_KEY": plantedKey}
		c := Config{Env: envOf(env), Resilience: instantRetries()}
		c.Resilience.MaxAttempts = 1
		sp := mustSpec(t, spec)
		sp.Grant.CommandLine = true
		p, err := c.Open(sp)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, _, err = p.Step(ctx, providers.Request{System: "s", Prompt: "u"})
		cancel()
		<-done
		srv.Close()
		if n := sent.Load(); n > limit {
			t.Errorf("%s: the client read %d MiB of one error body before it stopped", spec, n>>20)
		}
		if err == nil {
			t.Errorf("%s: the step did not fail", spec)
		} else if s := providers.ClassOf(err); s != providers.ClassProvider || !strings.Contains(err.Error(), "500") {
			t.Errorf("%s: err = %v (class %s), want the provider's HTTP 500", spec, err, s)
		}
	}
}
