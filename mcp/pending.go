package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Gemini CLI cuts a tool call at 60 s and Antigravity at 180 s, so no call
// blocks longer than Options.WaitLimit (50 s) unless the caller asks for it
// (run_team{wait: true}). run_team and checkpoint wait on their session's
// run, which goes on without them; step, finalize_team and
// generate_eval_criteria, whose work is one call into the service, wait on a
// flight: the work runs detached from the request, and a call past the limit
// returns Pending while it goes on. The call its next names (the same call
// again, or, for a step, with after_step: where it began) from the same
// tenant joins the flight instead of starting the work twice, and returns
// its result once it is done.

// Pending is the result of a call whose work outlived its wait: the work
// goes on in the server, and calling Next waits for it again.
type Pending struct {
	Status    string  `json:"status" jsonschema:"enum=running"`
	Tool      string  `json:"tool"`
	SessionID string  `json:"session_id,omitempty"`
	AgentID   string  `json:"agent_id,omitempty"`
	Elapsed   float64 `json:"elapsed_seconds"`
	Next      string  `json:"next" jsonschema_description:"The call that waits for the result."`
}

// keepFinished is how long the result of a flight whose caller has left
// waits to be collected by the same call; past it the work's effects are
// still in the session (team_status), and the call starts anew.
const keepFinished = 10 * time.Minute

// flights are the detached calls of one server, by key. Each entry either
// runs or waits at most keepFinished, so the map holds no more than the work
// under way and the results of the last minutes.
type flights struct {
	mu      sync.Mutex
	calls   map[string]*flight
	wg      sync.WaitGroup // the running flights, for shutdown
	stopped bool
}

type flight struct {
	done    chan struct{}
	val     any
	err     error
	cancel  context.CancelCauseFunc
	started time.Time
	session string      // the session the work is on, if any (cancel_team)
	expire  *time.Timer // forgets an uncollected result (under flights.mu)
	keys    []string    // every key it is under: its call's, and its continuation's (under flights.mu)
	next    func() any  // the starting call's continuation, if it names its own (flightCall.next); set before it is published
}

func newFlights() *flights { return &flights{calls: map[string]*flight{}} }

// flightCall is a call whose work may outlive its wait.
type flightCall struct {
	tool string
	args any // the decoded arguments: with tool and tenant, the flight's key
	// session and agent, if any, name what the work is on.
	session, agent string
	// what names the work for people: "agent_b's step".
	what string
	// next, if set, gives the arguments of the call that waits for the
	// work, when they are not args (a step's names where it began).
	next func() any
	// restate, if set, answers the work's value again as things stand now,
	// for a call that did not start the work: one that joined it, or the
	// continuation collecting it after its Pending, perhaps minutes and
	// other agents' steps later. A value it cannot restate is returned as
	// the work left it.
	restate func(context.Context, any) (any, error)
	// shared, on a store replicas share, claims the work in the store, so
	// the same call through another replica joins it or takes its result
	// (sharedcalls.go): for work whose retry finds nothing in a session.
	shared bool
}

// awaitFlight runs work for a call and waits for it up to the server's wait
// limit, or joins the flight of the same call already under way. It returns
// the work's value, or, when the wait ran out first, the Pending result to
// send instead. The request that started the work cancels it by going away
// before the limit, as it would a call it blocked on; after the limit nobody
// does (but cancel_team, for the session's), and a request that joined and
// goes away only stops waiting.
func awaitFlight[T any](h *handler, ctx context.Context, call flightCall, work func(context.Context) (T, error)) (T, *mcpgo.CallToolResult, error) {
	var zero T
	key := tenantOf(ctx) + "\x00" + call.tool + "\x00" + argsJSON(call.args)
	run := func(ctx context.Context) (any, error) { return work(ctx) }
	if call.shared {
		if shared := h.sharedWork(ctx, call, run, decodeAs[T]); shared != nil {
			run = shared
		}
	}
	f, owner := h.flights.join(key, ctx, call.session, call.next, run)
	if !owner {
		// A call that joined names the continuation of the work it
		// joined: only the call that started it knows where it began.
		call.next = f.next
	}
	limit := time.NewTimer(h.opts.WaitLimit)
	defer limit.Stop()
	select {
	case <-f.done:
	case <-limit.C:
		if call.next != nil {
			// The continuation may differ from this call (a step's names
			// where it began): it joins this flight too, and collecting it
			// under either name forgets both, so a later call of the first
			// arguments is new work, not this result.
			if alt := tenantOf(ctx) + "\x00" + call.tool + "\x00" + argsJSON(call.next()); alt != key {
				h.flights.alias(alt, f)
			}
		}
		return zero, h.pending(call, time.Since(f.started)), nil
	case <-ctx.Done():
		if !owner {
			return zero, nil, fmt.Errorf("stopped waiting for %s: %w", call.what, context.Cause(ctx))
		}
		f.cancel(context.Cause(ctx))
		<-f.done
	}
	h.flights.collected(key, f)
	if f.err != nil {
		return zero, nil, f.err
	}
	val := f.val
	if kept, ok := f.val.(keptCall); ok {
		kept.outcome.Collect(ctx)
		if kept.errResult != nil {
			return zero, kept.errResult, nil
		}
		val = kept.val
	}
	if !owner && call.restate != nil {
		if now, err := call.restate(ctx, val); err == nil {
			val = now
		}
	}
	return val.(T), nil, nil
}

// join returns the flight under key, starting work in a new one if there is
// none; owner says whether this call started it.
func (fs *flights) join(key string, ctx context.Context, session string, next func() any, work func(context.Context) (any, error)) (f *flight, owner bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f, ok := fs.calls[key]; ok {
		return f, false
	}
	if fs.stopped {
		f = &flight{done: make(chan struct{}), cancel: func(error) {}, started: time.Now(), err: errStopping}
		close(f.done)
		return f, true
	}
	wctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	f = &flight{done: make(chan struct{}), cancel: cancel, started: time.Now(), session: session, keys: []string{key}, next: next}
	fs.calls[key] = f
	fs.wg.Add(1)
	go func() {
		defer fs.wg.Done()
		f.val, f.err = work(wctx)
		cancel(nil)
		close(f.done)
		// Uncollected, the result waits keepFinished; collected (the
		// usual case), the timer is stopped and the result let go. One
		// the store keeps for every replica waits there instead: a later
		// call here reads it, or finds it collected through another.
		fs.mu.Lock()
		if fs.holds(f) {
			if keptInStore(f.val) {
				fs.forgetLocked(f)
			} else {
				f.expire = time.AfterFunc(keepFinished, func() { fs.collected(key, f) })
			}
		}
		fs.mu.Unlock()
	}()
	return f, true
}

// collected forgets a finished flight, under every key it is under, once
// its result has been returned (or kept long enough); a newer flight under
// one of those keys stays.
func (fs *flights) collected(key string, f *flight) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.calls[key] == f {
		delete(fs.calls, key)
	}
	fs.forgetLocked(f)
}

// forgetLocked takes f from under every key of its own (fs.mu held).
func (fs *flights) forgetLocked(f *flight) {
	for _, k := range f.keys {
		if fs.calls[k] == f {
			delete(fs.calls, k)
		}
	}
	if f.expire != nil {
		f.expire.Stop()
	}
}

// alias puts flight f under key too, unless another flight is there or f
// is forgotten already (collected as its wait ran out: nothing would ever
// forget it again).
func (fs *flights) alias(key string, f *flight) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, taken := fs.calls[key]; !taken && fs.holds(f) {
		fs.calls[key] = f
		f.keys = append(f.keys, key)
	}
}

// holds tells whether f is still under one of its keys (fs.mu held).
func (fs *flights) holds(f *flight) bool {
	for _, k := range f.keys {
		if fs.calls[k] == f {
			return true
		}
	}
	return false
}

// cancelSession cancels the flights on one session of a tenant (cancel_team:
// a step detached from its caller is still the session's).
func (fs *flights) cancelSession(tenant, session string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for key, f := range fs.calls {
		if f.session == session && strings.HasPrefix(key, tenant+"\x00") {
			f.cancel(errCancelledByRequest)
		}
	}
}

var errCancelledByRequest = errors.New("cancelled by cancel_team")

// cancelAll cancels every running flight and waits for them (the server is
// stopping), so none writes to a store after its server has returned. (A
// shared call's work deaf to its context is left behind after a short
// wait, coordination's runClaimed: what it writes then fails on its
// cancelled context.)
func (fs *flights) cancelAll() {
	fs.mu.Lock()
	fs.stopped = true
	for _, f := range fs.calls {
		f.cancel(errStopping)
	}
	fs.mu.Unlock()
	fs.wg.Wait()
}

var errStopping = errors.New("the server is stopping")

// argsJSON is a call's arguments as JSON: a struct encodes its fields in
// order, so equal arguments give equal text.
func argsJSON(args any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Sprint(args)
	}
	return string(b)
}

// pending is the Pending result of a call whose wait ran out, with its
// text: what goes on, and the call that waits for it.
func (h *handler) pending(call flightCall, elapsed time.Duration) *mcpgo.CallToolResult {
	args := call.args
	if call.next != nil {
		args = call.next()
	}
	next := call.tool + argsJSON(args)
	if len(next) > 200 {
		next = call.tool + " with the same arguments"
	}
	p := Pending{Status: "running", Tool: call.tool, SessionID: call.session, AgentID: call.agent, Elapsed: math.Round(elapsed.Seconds()*10) / 10, Next: next}
	text := fmt.Sprintf("%s is still going on in the server (%s so far). Call %s again to wait for it (up to %s a call).", call.what, roundDuration(elapsed), next, roundDuration(h.opts.WaitLimit))
	if call.session != "" && h.opts.Tools.Has("team_status") {
		text += fmt.Sprintf(" team_status{session_id: %q} shows the session meanwhile.", call.session)
	}
	return mcpgo.NewToolResultStructured(p, text+"\n")
}

// roundDuration renders a wait for people: 50s, 1m12s, 300ms.
func roundDuration(d time.Duration) string {
	if d >= time.Second {
		d = d.Round(time.Second)
	} else {
		d = d.Round(time.Millisecond)
	}
	return d.String()
}
