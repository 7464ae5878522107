package webui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// events streams a session page's state as server-sent events: the state
// now, then again after each change the store's watch reports — writes of
// this process, another process or another replica alike — at most once a
// Throttle, so a burst of steps is one event. A comment line every
// KeepAlive keeps proxies from closing a quiet stream. A tenant holds at
// most MaxStreams open; one past them is 429, to retry once a tab closes.
// A stream ends after StreamLifetime, its retry set to a second, and the
// browser's EventSource opens the next. Its writes end then too, a
// KeepAlive later at most (a write deadline): a reader that stopped
// reading (a laptop asleep with the page open) blocks a write once the
// socket's buffers are full, where the lifetime, looked at between writes,
// would never be seen and the place would be held until TCP gave up.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	svc := h.host.RequestService(ctx)
	id := r.PathValue("id")
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "this connection cannot stream events", http.StatusInternalServerError)
		return
	}
	release, err := h.streams.take(tenantOf(ctx))
	if err != nil {
		w.Header().Set("Retry-After", "10")
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	}
	defer release()
	// Subscribe before the first read, so no change between the two is lost.
	sub, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{id}, Kinds: []coordination.ObservationKind{coordination.ObservedChange}, Buffer: 1})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	defer sub.Close()
	st, err := buildState(ctx, svc, id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.opts.StreamLifetime + h.opts.KeepAlive)); err != nil {
		h.opts.Logger.Debug().Err(err).Msg("an event stream's writes have no deadline on this connection")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(st *sessionState) bool {
		b, err := json.Marshal(st)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: state\ndata: %s\n\n", b); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	if _, err := fmt.Fprint(w, "retry: 1000\n"); err != nil || !send(st) {
		return
	}
	alive := time.NewTicker(h.opts.KeepAlive)
	defer alive.Stop()
	lifetime := time.NewTimer(h.opts.StreamLifetime)
	defer lifetime.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lifetime.C:
			return
		case <-alive.C:
			if _, err := fmt.Fprint(w, ": alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		case <-sub.Ready():
			if ctx.Err() != nil {
				return
			}
			if wait := h.opts.Throttle - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
			sub.Take()
			last = time.Now()
			st, err := buildState(ctx, svc, id)
			if err != nil {
				h.opts.Logger.Warn().Err(err).Str("session", id).Msg("the web view could not read a session it watches")
				return
			}
			if !send(st) {
				return
			}
		}
	}
}
