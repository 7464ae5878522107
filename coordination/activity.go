package coordination

import "time"

// Activity is what a step's model does while the step runs: text as it
// streams, or a retry it waits for. It reaches subscribers only
// (ObservedActivity): nothing of it is written to the ledger, the events or
// status.json.
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

// activityWatcher is the provider watcher of one step, or nil when no
// subscription hears the session's activity (Subscribe).
func (svc *Service) activityWatcher(session, agent string, step int) *stepWatcher {
	if !svc.hears(session, ObservedActivity) {
		return nil
	}
	return &stepWatcher{svc: svc, base: Activity{SessionID: session, Agent: agent, Step: step}}
}

// stepWatcher publishes what a step's provider reports as it streams. It
// runs on the provider's goroutine; publishing never waits for a reader.
type stepWatcher struct {
	svc  *Service
	base Activity
}

func (w *stepWatcher) Text(delta string) {
	a := w.base
	a.Kind, a.Text, a.Time = "text", delta, time.Now()
	w.publish(&a)
}

func (w *stepWatcher) Retry(wait time.Duration, err error) {
	a := w.base
	a.Kind, a.Wait, a.Time = "retry", wait, time.Now()
	if err != nil {
		a.Err = err.Error()
	}
	w.publish(&a)
}

func (w *stepWatcher) publish(a *Activity) {
	w.svc.publish(Observation{SessionID: a.SessionID, Kind: ObservedActivity, Activity: a})
}

// modelCallActivity reports that a step's model call went out or came back
// to the process's activity hook (Options.OnModelCall). Unlike Activity,
// which subscribers of a session hear, the hook is the process's:
// cmd hangs its idle garbage collector on it, a policy of the process that
// the protocol core has no business holding.
func (svc *Service) modelCallActivity() {
	if fn := svc.opts.OnModelCall; fn != nil {
		fn()
	}
}
