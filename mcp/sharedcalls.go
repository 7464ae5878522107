package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// A call past its wait returns Pending and its work goes on in a flight of
// the server that took it. Behind a load balancer the retry may reach
// another replica, which has no such flight: without more, it would do the
// work again, and for generate_eval_criteria pay a model for it twice. A
// flight marked shared (flightCall.shared) on a store that replicas share
// (sharedCalls: the PostgreSQL store) is also claimed in the store: a
// replica that finds the call claimed waits for it there and takes the
// result its holder kept, or takes the work over once the holder's claim
// lapses (the holder died). step and finalize_team need none of this: their
// retries find the work in the session itself.

// sharedCalls is a store that keeps the claims and results of calls for
// every replica sharing it (pgstore.Store).
type sharedCalls interface {
	ClaimCall(ctx context.Context, key, holder, seen string, ttl time.Duration) (mine bool, by string, result []byte, err error)
	RenewCall(ctx context.Context, key, holder string, ttl time.Duration) (bool, error)
	KeepCall(ctx context.Context, key, holder string, result []byte, keep time.Duration) error
	ReleaseCall(ctx context.Context, key, holder string) error
	CollectCall(ctx context.Context, key, holder string) error
}

// Variables, not constants, so tests can shorten them.
var (
	// callClaimTTL is how long a holder's claim lasts unrenewed: a replica
	// waiting on a dead holder's call takes it over after at most this.
	callClaimTTL = 10 * time.Second
	// callPoll is how often a replica waiting on another's call looks.
	callPoll = 250 * time.Millisecond
	// callMaxTime bounds a shared call's work: a hung model call would
	// otherwise keep its claim renewed, and every replica's retry
	// waiting, for ever. Past it the work ends with errCallTooLong (kept,
	// so the retry is told), and the claim is no longer renewed.
	callMaxTime = keepFinished
)

// storeCallTimeout bounds each of a shared call's store statements, so a
// hung one neither stops the renewals nor holds the result back.
func storeCallTimeout() time.Duration { return callClaimTTL / 3 }

var errCallTooLong = errors.New("the work ran past its time limit and was stopped; call again to start it anew")

// storeCtx is ctx without its cancel, for storeCallTimeout: a store
// statement about work whose request ended must still be made.
func storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), storeCallTimeout())
}

// keptCall is a shared flight's outcome: the work's value, or the error
// result it rendered (so every replica answers alike), and how to mark it
// collected in the store.
type keptCall struct {
	val       any
	errResult *mcpgo.CallToolResult
	key, from string // the call's key and the holder whose result it is
	store     sharedCalls
	stored    bool // the store keeps it: this server need not
}

// keptInStore tells whether a flight's value is kept in the store.
func keptInStore(v any) bool {
	k, ok := v.(keptCall)
	return ok && k.stored
}

// collect marks the result returned: a new call of the same arguments,
// through any replica, is new work.
func (k keptCall) collect(ctx context.Context, h *handler) {
	ctx, cancel := storeCtx(ctx)
	defer cancel()
	if err := k.store.CollectCall(ctx, k.key, k.from); err != nil {
		h.log.Warn().Err(err).Msg("could not mark a call's result collected in the store; a repeat of the call through another replica in the next minutes gets the same result")
	}
}

// keptRecord is a result as the store keeps it.
type keptRecord struct {
	Value json.RawMessage `json:"value,omitempty"`
	Error json.RawMessage `json:"error,omitempty"` // the rendered error result
}

// sharedWork is work run as a flight shared through the store, or nil when
// the tenant's store is not shared. decode reads a kept value back.
func (h *handler) sharedWork(ctx context.Context, call flightCall, work func(context.Context) (any, error), decode func([]byte) (any, error)) func(context.Context) (any, error) {
	store, ok := h.svc(ctx).Store().(sharedCalls)
	if !ok {
		return nil
	}
	return h.sharedWorkOn(store, call, work, decode)
}

// sharedWorkOn is sharedWork on store.
func (h *handler) sharedWorkOn(store sharedCalls, call flightCall, work func(context.Context) (any, error), decode func([]byte) (any, error)) func(context.Context) (any, error) {
	sum := sha256.Sum256([]byte(call.tool + "\x00" + argsJSON(call.args)))
	key := hex.EncodeToString(sum[:])
	holder := h.flights.holder + "." + strconv.FormatUint(h.flights.seq.Add(1), 36)
	return func(ctx context.Context) (any, error) {
		seen := ""
		var failing time.Time // since when the store has not answered
		for waited := time.Now(); ; {
			cctx, cancel := context.WithTimeout(ctx, storeCallTimeout())
			mine, by, kept, err := store.ClaimCall(cctx, key, holder, seen, callClaimTTL)
			cancel()
			switch {
			case err != nil && ctx.Err() != nil:
				// A claim that committed unanswered is let go, so no
				// waiter sits out its lifetime.
				rctx, cancel := storeCtx(ctx)
				_ = store.ReleaseCall(rctx, key, holder)
				cancel()
				return nil, context.Cause(ctx)
			case err != nil && failing.IsZero():
				// A blip, or a claim whose answer was lost (it may have
				// committed: the next look finds it this holder's).
				failing = time.Now()
				h.log.Warn().Err(err).Str("tool", call.tool).Msg("the store could not say how this call stands; looking again")
			case err != nil && time.Since(failing) > callClaimTTL:
				// The store gone for longer than a holder's claim lasts:
				// the work is done here, unshared, rather than not at all.
				h.log.Warn().Err(err).Str("tool", call.tool).Msg("the store could not say whether another replica runs this call; running it here")
				return work(ctx)
			case err != nil:
			case mine || (by == holder && kept == nil):
				return h.runClaimed(ctx, call.tool, store, key, holder, work)
			case kept != nil:
				return h.unkeep(ctx, call.tool, kept, keptCall{key: key, from: by, store: store, stored: true}, decode)
			}
			if err == nil {
				failing = time.Time{}
			}
			if by != "" && by != seen {
				// A new holder (the last one's claim lapsed): its work
				// has its own time limit.
				seen, waited = by, time.Now()
			}
			if time.Since(waited) > callMaxTime+callClaimTTL+storeCallTimeout()+callPoll {
				// The holder's work is bounded by callMaxTime and its
				// claim lapses after it (its last renewal may take a store
				// call's time): this is a holder past both.
				return nil, fmt.Errorf("another replica has been doing this %s call for over %s: %w", call.tool, callMaxTime, errCallTooLong)
			}
			select {
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			case <-time.After(callPoll):
			}
		}
	}
}

// runClaimed does the work of a call claimed in the store, renewing the
// claim meanwhile, and keeps its outcome for a replica the retry reaches.
// Work stopped because its request went away or the server is stopping
// keeps nothing: its claim is let go, for a waiting replica to take over.
func (h *handler) runClaimed(ctx context.Context, tool string, store sharedCalls, key, holder string, work func(context.Context) (any, error)) (any, error) {
	wctx, cancelWork := context.WithTimeoutCause(ctx, callMaxTime, errCallTooLong)
	defer cancelWork()
	renewing := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(renewing)
		tick := time.NewTicker(callClaimTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-wctx.Done():
				// Past callMaxTime work that ignores its context must
				// not hold the call: the claim lapses.
				return
			case <-tick.C:
				if wctx.Err() != nil { // both ready: the deadline wins
					return
				}
				rctx, cancel := storeCtx(ctx)
				ok, err := store.RenewCall(rctx, key, holder, callClaimTTL)
				cancel()
				if err != nil || !ok {
					h.log.Warn().Err(err).Str("tool", tool).Bool("lapsed", !ok).Msg("could not renew this replica's claim on a call in the store; another replica may do it again")
				}
			}
		}
	}()
	// Work deaf to its context is left behind at its deadline, so neither
	// this flight nor a call that joins it here waits for it for ever.
	type outcome struct {
		val any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		val, err := work(wctx)
		done <- outcome{val, err}
	}()
	var val any
	var err error
	select {
	case o := <-done:
		val, err = o.val, o.err
	case <-wctx.Done():
		select {
		case o := <-done: // it heard its context after all
			val, err = o.val, o.err
		case <-time.After(storeCallTimeout()):
			err = context.Cause(wctx)
		}
	}
	close(stop)
	<-renewing
	if err != nil && errors.Is(context.Cause(wctx), errCallTooLong) && ctx.Err() == nil {
		err = fmt.Errorf("%s: %w", tool, errCallTooLong)
	}
	bg, cancel := storeCtx(ctx)
	defer cancel()
	if err != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), errCancelledByRequest) {
		if rerr := store.ReleaseCall(bg, key, holder); rerr != nil {
			h.log.Warn().Err(rerr).Str("tool", tool).Msg("could not let go of a call's claim in the store; another replica takes it once the claim lapses")
		}
		return nil, err
	}
	out := keptCall{val: val, key: key, from: holder, store: store}
	var rec keptRecord
	var merr error
	if err != nil {
		out.errResult = h.errorResult(bg, tool, err)
		rec.Error, merr = json.Marshal(out.errResult)
	} else {
		rec.Value, merr = json.Marshal(val)
	}
	raw, jerr := json.Marshal(rec)
	if err := errors.Join(merr, jerr); err != nil {
		h.log.Warn().Err(err).Str("tool", tool).Msg("could not encode a call's result for the store; a retry through another replica does the work again")
		_ = store.ReleaseCall(bg, key, holder)
		return out, nil
	}
	if err := store.KeepCall(bg, key, holder, raw, keepFinished); err != nil {
		h.log.Warn().Err(err).Str("tool", tool).Msg("could not keep a call's result in the store; a retry through another replica does the work again")
		return out, nil
	}
	out.stored = true
	return out, nil
}

// unkeep reads the result another holder kept.
// A damaged one is marked collected, so calling again redoes the work.
func (h *handler) unkeep(ctx context.Context, tool string, raw []byte, out keptCall, decode func([]byte) (any, error)) (any, error) {
	var rec keptRecord
	err := json.Unmarshal(raw, &rec)
	switch {
	case err != nil:
	case len(rec.Error) > 0:
		out.errResult, err = mcpgo.ParseCallToolResult(&rec.Error)
	default:
		out.val, err = decode(rec.Value)
	}
	if err != nil {
		out.collect(ctx, h)
		return nil, fmt.Errorf("the result another replica kept for this %s call is damaged (%w); call it again to redo the work", tool, err)
	}
	return out, nil
}

// decodeAs reads a kept value of type T.
func decodeAs[T any](raw []byte) (any, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

// newHolder names this server's claims in the store.
func newHolder() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
