package coordination

import (
	"context"
	"time"
)

// Activity is what a step's model does while the step runs: text as it
// streams, or a retry it waits for. It reaches live views only: nothing of it
// is written to the ledger, the events or status.json.
type Activity struct {
	SessionID string
	Agent     string
	Step      int
	Kind      string // "text" or "retry"
	Text      string // text: the piece that arrived
	Wait      time.Duration
	Err       string // retry: what failed
	Time      time.Time
}

type activityKey struct{}

// WithActivity returns a context whose runs and steps report their models'
// activity to fn (a run started with it carries it to every step). fn is
// called on the provider's goroutine and must return at once.
func WithActivity(ctx context.Context, fn func(Activity)) context.Context {
	return context.WithValue(ctx, activityKey{}, fn)
}

// activityWatcher is the provider watcher of one step, or nil when nobody
// listens.
func activityWatcher(ctx context.Context, session, agent string, step int) *stepWatcher {
	fn, _ := ctx.Value(activityKey{}).(func(Activity))
	if fn == nil {
		return nil
	}
	return &stepWatcher{fn: fn, base: Activity{SessionID: session, Agent: agent, Step: step}}
}

type stepWatcher struct {
	fn   func(Activity)
	base Activity
}

func (w *stepWatcher) Text(delta string) {
	a := w.base
	a.Kind, a.Text, a.Time = "text", delta, time.Now()
	w.fn(a)
}

func (w *stepWatcher) Retry(wait time.Duration, err error) {
	a := w.base
	a.Kind, a.Wait, a.Time = "retry", wait, time.Now()
	if err != nil {
		a.Err = err.Error()
	}
	w.fn(a)
}

// modelCallActivity reports that a step's model call went out or came back
// to the process's activity hook (Options.OnModelCall). Unlike Activity,
// which a run's context carries to its live views, the hook is the process's:
// cmd hangs its idle garbage collector on it, a policy of the process that
// the protocol core has no business holding.
func (svc *Service) modelCallActivity() {
	if fn := svc.opts.OnModelCall; fn != nil {
		fn()
	}
}
