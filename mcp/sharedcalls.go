package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A flight marked shared (flightCall.shared) on a store that replicas share
// runs through coordination's shared calls (Service.ShareCall): a retry
// that a load balancer sends to another replica joins the work, or takes
// its outcome, instead of doing it again. This file only translates: the
// call's key, and its value or error result as the bytes kept. step and
// finalize_team need none of it: their retries find the work in the
// session itself.

// keptCall is a shared flight's outcome: the work's value, or the error
// result its holder rendered (so every replica answers alike), and the
// claim to mark collected.
type keptCall struct {
	val       any
	errResult *mcpgo.CallToolResult
	outcome   coordination.CallOutcome
}

// keptInStore tells whether a flight's value is kept in the store, for
// every replica: this server need not keep it.
func keptInStore(v any) bool {
	k, ok := v.(keptCall)
	return ok && k.outcome.Stored
}

// keptRecord is an outcome as the store keeps it.
type keptRecord struct {
	Value json.RawMessage `json:"value,omitempty"`
	Error json.RawMessage `json:"error,omitempty"` // the rendered error result
}

// sharedWork is work run as a shared call, or nil when the tenant's store
// shares none. decode reads a kept value back.
func (h *handler) sharedWork(ctx context.Context, call flightCall, work func(context.Context) (any, error), decode func([]byte) (any, error)) func(context.Context) (any, error) {
	svc := h.svc(ctx)
	if !svc.SharesCalls() {
		return nil
	}
	sum := sha256.Sum256([]byte(call.tool + "\x00" + argsJSON(call.args)))
	key := hex.EncodeToString(sum[:])
	return func(ctx context.Context) (any, error) {
		value := func(wctx context.Context) ([]byte, error) {
			v, err := work(wctx)
			if err != nil {
				return nil, err
			}
			raw, err := json.Marshal(v)
			if err != nil {
				// Kept as that error, for every replica alike: a value
				// JSON cannot carry (a NaN) is not one to return either.
				return nil, fmt.Errorf("could not encode the %s result: %w", call.tool, err)
			}
			return json.Marshal(keptRecord{Value: raw})
		}
		// An error is kept as the result it renders, unless the work
		// stopped because its request went away or the server is stopping:
		// a waiting replica then does it (cancel_team's stop is kept).
		keep := func(err error) ([]byte, bool) {
			if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errCancelledByRequest) {
				return nil, false
			}
			rendered, merr := json.Marshal(h.errorResult(ctx, call.tool, err))
			if merr != nil {
				return nil, false
			}
			raw, merr := json.Marshal(keptRecord{Error: rendered})
			return raw, merr == nil
		}
		out, err := svc.ShareCall(ctx, key, value, keep)
		if err != nil {
			return nil, err
		}
		return h.unkeep(ctx, call.tool, out, decode)
	}
}

// unkeep reads a shared call's outcome. A damaged one is marked
// collected, so calling again redoes the work.
func (h *handler) unkeep(ctx context.Context, tool string, out coordination.CallOutcome, decode func([]byte) (any, error)) (any, error) {
	k := keptCall{outcome: out}
	var rec keptRecord
	err := json.Unmarshal(out.Kept, &rec)
	switch {
	case err != nil:
	case len(rec.Error) > 0:
		k.errResult, err = mcpgo.ParseCallToolResult(&rec.Error)
	default:
		k.val, err = decode(rec.Value)
	}
	if err != nil {
		out.Collect(ctx)
		return nil, fmt.Errorf("the result kept for this %s call is damaged (%w); call it again to redo the work", tool, err)
	}
	return k, nil
}

// decodeAs reads a kept value of type T.
func decodeAs[T any](raw []byte) (any, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}
