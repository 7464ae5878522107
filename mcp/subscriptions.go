package mcp

import (
	"context"
	"encoding/json"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// awaitListenAck holds a subscriptions/listen response (protocol 2026-07-28)
// until its acknowledgement has been written, so the acknowledgement is the
// first message of the stream, as the spec requires. mcp-go queues the
// acknowledgement and, with nothing to subscribe to (this server's lists
// never change), returns at once; its HTTP transport can then drop a
// notification that its forwarder had already taken off the queue
// (mark3labs/mcp-go#969), and its stdio transport can write the result
// first. A transport without receipts (in-process) is left as it is.
func awaitListenAck(deliver time.Duration) server.OnAfterSubscriptionsListenFunc {
	return func(ctx context.Context, id any, _ *mcpgo.SubscriptionsListenRequest, _ *mcpgo.SubscriptionsListenResult) {
		r := receiptsFrom(ctx)
		if r == nil || ctx.Err() != nil {
			return
		}
		raw, err := json.Marshal(id)
		if err != nil {
			return
		}
		key := subscriptionKey(string(raw))
		r.expect(key)
		r.await(ctx, key, 1, time.Now().Add(deliver))
	}
}

// subscriptionKey is the receipts key of the acknowledgement of the listen
// stream with this id (its JSON). The prefix keeps it apart from progress
// tokens, whose keys are JSON values.
func subscriptionKey(idJSON string) string { return "subscription " + idJSON }
