package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// recorder is a providers.Watcher that keeps what it hears.
type recorder struct {
	mu     sync.Mutex
	pieces []string
}

func (r *recorder) Text(d string)                    { r.mu.Lock(); r.pieces = append(r.pieces, d); r.mu.Unlock() }
func (r *recorder) Retry(w time.Duration, err error) {}

func TestStreamedArgumentsReachTheWatcherAsTheyArrive(t *testing.T) {
	for _, tg := range targets[:2] {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			content := "6 x 7 = 42, worked out step by step.\nAnswer: 42"
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyNewAnswer, Content: content})
			req := stepRequest()
			rec := &recorder{}
			req.Watch = rec
			act, _, err := r.open(t, tg).Step(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(rec.pieces, "")
			if len(rec.pieces) < 2 {
				t.Fatalf("want the reply in pieces as it streamed, got %q", rec.pieces)
			}
			var args struct{ Content string }
			if err := json.Unmarshal([]byte(joined), &args); err != nil || args.Content != content {
				t.Fatalf("the pieces should add up to the call's arguments %s, got %q (%v)", act.Calls[0].Args, joined, err)
			}
		})
	}
}
