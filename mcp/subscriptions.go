package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// listenAcks holds a subscriptions/listen response (protocol 2026-07-28)
// until its acknowledgement has been written, so the acknowledgement is the
// first message of the stream, as the spec requires. mcp-go queues the
// acknowledgement and, with nothing to subscribe to (this server's lists
// never change), returns at once; its HTTP transport can then drop a
// notification that its forwarder had already taken off the queue
// (mark3labs/mcp-go#969), and its stdio transport can write the result
// first. A transport without receipts (in-process) is left as it is.
//
// The receipt is expected before mcp-go queues the acknowledgement, so two
// requests with the same id (two HTTP clients) can only make each other wait
// longer, never return before their own acknowledgement is out.
type listenAcks struct {
	deliver time.Duration
	pending sync.Map // *mcpgo.SubscriptionsListenRequest → receipts key
}

func (a *listenAcks) hooks(h *server.Hooks) {
	h.AddBeforeSubscriptionsListen(a.before)
	h.AddAfterSubscriptionsListen(a.after)
	h.AddOnError(a.failed)
}

func (a *listenAcks) before(ctx context.Context, id any, req *mcpgo.SubscriptionsListenRequest) {
	r := receiptsFrom(ctx)
	if r == nil {
		return
	}
	raw, err := json.Marshal(id)
	if err != nil {
		return
	}
	key := subscriptionKey(string(raw))
	r.expect(key)
	a.pending.Store(req, key)
}

func (a *listenAcks) after(ctx context.Context, _ any, req *mcpgo.SubscriptionsListenRequest, _ *mcpgo.SubscriptionsListenResult) {
	key, ok := a.pending.LoadAndDelete(req)
	if !ok {
		return
	}
	// await forgets the expected receipt if ctx ends or the time is up.
	receiptsFrom(ctx).await(ctx, key.(string), 1, time.Now().Add(a.deliver))
}

// failed forgets the receipt of a listen request that failed after it was
// expected (no acknowledgement will come).
func (a *listenAcks) failed(ctx context.Context, _ any, method mcpgo.MCPMethod, message any, _ error) {
	req, ok := message.(*mcpgo.SubscriptionsListenRequest)
	if method != mcpgo.MethodSubscriptionsListen || !ok {
		return
	}
	if key, ok := a.pending.LoadAndDelete(req); ok {
		receiptsFrom(ctx).forget(key.(string), 1)
	}
}

// subscriptionKey is the receipts key of the acknowledgement of the listen
// stream with this id (its JSON). The prefix keeps it apart from progress
// tokens, whose keys are JSON values.
func subscriptionKey(idJSON string) string { return "subscription " + idJSON }
