package coordination_test

import (
	"context"
	"sync/atomic"

	"github.com/massgen-go/massgen-mcp/providers"
)

// heldFirstCriteriaCall opens criteriaWriters (calls counts their criteria
// calls) whose first criteria request waits inside its model: entered is
// closed when it arrives, and it goes on once release is closed, so a test
// can act while that call holds its reservation. steps, when not nil,
// counts the agents' step requests.
func heldFirstCriteriaCall(calls, steps *atomic.Int32) (open func(providers.Spec) (providers.Provider, error), entered, release chan struct{}) {
	writers := criteriaWriters(calls)
	entered, release = make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	open = func(sp providers.Spec) (providers.Provider, error) {
		p, err := writers(sp)
		if err != nil {
			return nil, err
		}
		return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.Purpose != providers.PurposeCriteria {
				if steps != nil {
					steps.Add(1)
				}
			} else if first.CompareAndSwap(false, true) {
				close(entered)
				<-release
			}
			return p.Step(ctx, req)
		}), nil
	}
	return open, entered, release
}
