package backends

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestAnEndlessReplyIsCutAtTheCap points every API family's real SDK at a
// server that answers 200 and streams text without end (a hostile server, or
// a broken one looping). Without a bound the client reads, and the adapter
// keeps, whatever comes until the step's deadline: memory grows the whole
// time. The client must stop near providers.MaxResponseBody, fail the call
// with an error that names the backend and the limit (not a timeout, not
// retried), and still charge what streamed so far.
func TestAnEndlessReplyIsCutAtTheCap(t *testing.T) {
	const slack = 8 << 20 // what the sockets' buffers and the last writes may add past the cap
	for _, tc := range []struct{ model, backend string }{
		{"openai/gpt-5-mini", "openai"},
		{"grok/grok-4", "grok"},
		{"claude/claude-haiku-4-5", "claude"},
		{"gemini/gemini-2.5-flash", "gemini"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			script := fake.NewScript()
			script.Default = func(fake.Call) fake.Reply { return fake.Reply{Kind: fake.ReplyFlood} }
			var sent atomic.Int64
			h := fake.NewAll(script)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(countingWriter{w, &sent}, r)
			}))
			defer srv.Close()
			env := fake.BaseURLs(srv.URL)
			for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"} {
				env[k] = plantedKey
			}
			c := Config{Env: envOf(env), Resilience: instantRetries()}
			p, err := c.Open(mustSpec(t, tc.model))
			if err != nil {
				t.Fatal(err)
			}
			// The deadline only stands for the step's: the cap, not it,
			// must end the call. Under -race on two loaded cores genai
			// decodes about 2 MiB a second (59 MiB in 30 s in one CI run).
			ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
			defer cancel()
			_, u, err := p.Step(ctx, providers.Request{System: "s", Prompt: "u"})
			n := sent.Load()
			t.Logf("%d MiB sent; usage %+v; err: %v", n>>20, u, err)
			if err == nil {
				t.Fatal("an endless reply did not fail the step")
			}
			if n > (64<<20)+slack {
				t.Errorf("the client read %d MiB of an endless reply; want it stopped near %d MiB", n>>20, (64<<20)>>20)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.backend) || !strings.Contains(msg, "64 MiB") || ctx.Err() != nil {
				t.Errorf("err = %v; want it to name %s and the 64 MiB limit, before the deadline", err, tc.backend)
			}
			if calls := len(script.Calls()); calls != 1 {
				t.Errorf("%d calls; an endless reply is not worth another try", calls)
			}
			if u.Output <= 0 || !u.CostEstimated {
				t.Errorf("usage %+v: what streamed before the cap is not charged", u)
			}
		})
	}
}

// countingWriter counts the body bytes a handler writes, and ends the flood
// at twice the cap, so that a client without a cap fails the test instead of
// growing until the machine runs out of memory.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(b []byte) (int, error) {
	if w.n.Load() > 2*providers.MaxResponseBody {
		return 0, errFloodOver
	}
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

var errFloodOver = errors.New("the test's flood is over")

func (w countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
