package providers

import "context"

// Func adapts an ordinary function to a Provider, as http.HandlerFunc adapts
// one to an http.Handler: Func(f) is a Provider whose Step calls f. It is for
// a provider small enough to write inline (a test's stalling or failing
// model, a wrapper that counts calls) without declaring a type for it.
type Func func(ctx context.Context, req Request) (Action, Usage, error)

// Step calls f(ctx, req) and returns what it returns.
func (f Func) Step(ctx context.Context, req Request) (Action, Usage, error) {
	return f(ctx, req)
}
