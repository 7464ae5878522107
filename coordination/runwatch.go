package coordination

import (
	"context"
	"time"
)

// watchRetry is how often a run whose session watch failed sets it up
// again, and looks at its session meanwhile: a cancel from another process
// is then seen within about this long.
const watchRetry = time.Second

// runWatch is a run loop's watch of its session's changes (cancels and
// finishes recorded by other processes), set up again when it fails.
type runWatch struct {
	svc     *Service
	id      string
	ctx     context.Context
	changes <-chan Change // nil while there is no watch
	tried   time.Time     // the last attempt to set it up
	warned  bool
}

// again sets the watch up unless one was tried within watchRetry, and
// tells whether it did; the first failure is logged, once.
func (w *runWatch) again() bool {
	if time.Since(w.tried) < watchRetry {
		return false
	}
	w.tried = time.Now()
	ch, err := w.svc.store.Watch(w.ctx, w.id)
	if err == nil {
		w.changes = ch
		return true
	}
	if !w.warned {
		w.warned = true
		w.svc.log.Warn().Err(err).Str("session", w.id).Msg("cannot watch the session; trying again each second, and looking at it meanwhile")
	}
	return false
}
