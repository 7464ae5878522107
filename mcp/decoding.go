package mcp

import (
	"context"
	"net/http"
	"sync"

	"golang.org/x/sync/semaphore"
)

// A tool call within every cap (bounds.go) may still be a 4 MiB body of
// text, and decoding it costs about seven times its size before the handler
// can refuse it (mcp-go's raw copy and generic maps, the operator-only and
// schema checks, the typed arguments): eight at once took a server past
// 300 MB, and two at a time still to 266 MiB. So large bodies are decoded a few at a time: a request holds its
// body's size of decodingBudget from before mcp-go reads it until
// typedHandler has its typed arguments (or the request ends), and the rest
// wait their turn. Small bodies, nearly every call, never wait.
const (
	// decodingBudget is the body bytes decoded at once: one body at the
	// default cap, or several smaller ones. Large bodies are rare (a long
	// task or context); their decoding takes milliseconds.
	decodingBudget = DefaultMaxBody
	// smallBody is a body that decodes without taking from the budget.
	smallBody = 256 << 10
)

type decodingKey struct{}

// limitDecoding makes large bodies take their size from the budget before
// they reach mcp-go.
func limitDecoding(budget *semaphore.Weighted, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := min(int64(len(bodyOf(r.Context()))), decodingBudget)
		if n <= smallBody {
			next.ServeHTTP(w, r)
			return
		}
		if budget.Acquire(r.Context(), n) != nil {
			return // the client went away while waiting
		}
		var once sync.Once
		release := func() { once.Do(func() { budget.Release(n) }) }
		defer release()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), decodingKey{}, release)))
	})
}

// decoded gives back a request's share of the budget once its arguments
// are decoded: a blocking run_team must not hold it for the whole run.
func decoded(ctx context.Context) {
	if release, ok := ctx.Value(decodingKey{}).(func()); ok {
		release()
	}
}
