package coordination

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// hosts is the road of host agents, driven by the outer agent: the views
// they are issued and the submissions checked against them. It reads and
// writes through the service's sessions, store and landing.
type hosts struct{ svc *Service }

// view shows a host agent the prompt its model would get and records the
// seen_steps it was issued. A view never takes the step lock.
func (h hosts) view(ctx context.Context, s *Session, agentID string) (*StepResult, error) {
	unlock, err := h.svc.store.LockSession(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	_, l, st, err := h.svc.sessions.load(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	v := h.svc.view(s, st, agentID)
	if err := h.svc.store.SaveView(ctx, s.ID, agentID, IssuedView{SeenSteps: v.SeenSteps, Revote: v.Revote, IssuedAt: h.svc.now()}); err != nil {
		return nil, err
	}
	res := h.svc.snapshot(s, l, st)
	out := &StepResult{
		SessionID:  s.ID,
		AgentID:    agentID,
		Action:     "view",
		SeenSteps:  v.SeenSteps,
		Consensus:  res.Consensus,
		NextAgents: append([]string{}, st.Next...),
		View:       &HostView{Prompt: v.Prompt, System: v.System, Actions: slices.Clone(v.Actions), VoteEnum: append([]string{}, v.VoteEnum...), Revote: v.Revote},
	}
	if out.View.VoteEnum == nil {
		out.View.VoteEnum = []string{}
	}
	if err := due(s, st, agentID); err != nil {
		out.Message = "view only: " + err.Error()
	}
	return out, nil
}

// submit records a host agent's action, checked against the latest view
// issued to it. An issued view accepts one landed submission: an identical
// resubmission returns the original step's result (replay), any other is
// refused; a submission refused as invalid leaves the view unused.
func (h hosts) submit(ctx context.Context, s *Session, req StepRequest) (*StepResult, error) {
	lock, st, err := h.svc.stepState(ctx, s, req.AgentID, h.svc.lockOnly)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	issued, err := h.svc.store.View(ctx, s.ID, req.AgentID)
	if err != nil {
		return nil, err
	}
	if err := checkIssued(req, issued); err != nil {
		return nil, err
	}
	if issued.Landed > 0 {
		lock.Release()
		return h.replay(ctx, s, req, issued)
	}
	if req.Action == providers.ToolVote && IsVoteStale(&Entry{SeenSteps: issued.SeenSteps}, st.Latest) {
		// A model's vote on an outdated view cannot be refused in time and is
		// recorded as stale; a host can take a fresh view, so it is asked to.
		return nil, &StaleViewError{Agent: req.AgentID, Why: ViewOutdated}
	}
	v := h.svc.view(s, st, req.AgentID)
	// The entry records what the host saw when its view was issued.
	v.SeenSteps = issued.SeenSteps
	for name := range v.labelOf {
		n, _, _ := parseAlias(name)
		if a := st.AgentByAlias(n); a != nil {
			v.labelOf[name] = labelAtStep(a, issued.SeenSteps[a.ID])
		}
	}
	var reply providers.Action
	switch req.Action {
	case providers.ToolNewAnswer:
		reply.Calls = []providers.ToolCall{providers.NewAnswerCall(req.Content)}
	case providers.ToolVote:
		reply.Calls = []providers.ToolCall{providers.VoteCall(req.Target, req.Reason)}
	}
	d, problem := validate(s, st, v, reply)
	if problem != "" {
		return nil, fmt.Errorf("%w: %s", ErrBadAction, problem)
	}
	entry := entryFor(st, v, d, providers.Free())
	entry.Agent, entry.Time = req.AgentID, h.svc.now()
	entry.DurationSeconds = h.svc.now().Sub(issued.IssuedAt).Seconds()
	// The view is marked used under the step lock, before it is released,
	// so a retry arriving after the lock is free finds the mark.
	marked := &markingLock{StepLock: lock, mark: func(ctx context.Context, e Entry) error {
		used := *issued
		used.Landed, used.Submission = e.Step, submission(req)
		return h.svc.store.SaveView(ctx, s.ID, req.AgentID, used)
	}}
	// Once validated, the submission lands, and its view is marked, even if
	// its request ends meanwhile (its client gave up waiting through an
	// outage): an attempt that committed before the answer was lost is then
	// found and its view marked, where giving up left the view unmarked, and
	// the same submission, sent again, landed a second step.
	lctx, done := outlive(ctx, hostLandingGrace)
	defer done()
	return h.svc.land(lctx, s, marked, nil, v, entry, true, st.Life.Cancels)
}

// hostLandingGrace bounds how long a host's validated submission goes on
// landing, through an outage, after its request ended.
const hostLandingGrace = 30 * time.Second

// outlive is a context that goes on for grace after ctx ends (cancelled
// then with ctx's cause), so a caller still waiting waits as long as the
// work takes; done releases it.
func outlive(ctx context.Context, grace time.Duration) (context.Context, func()) {
	out, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-out.Done():
		case <-t.C:
			cancel(context.Cause(ctx))
		}
	})
	return out, func() { stop(); cancel(nil) }
}

// checkIssued checks a submission's seen_steps against the view issued.
func checkIssued(req StepRequest, issued *IssuedView) error {
	switch {
	case len(req.SeenSteps) == 0:
		return &StaleViewError{Agent: req.AgentID, Why: ViewMissing}
	case issued == nil:
		return &StaleViewError{Agent: req.AgentID, Why: ViewNotIssued}
	case !maps.Equal(issued.SeenSteps, req.SeenSteps):
		return &StaleViewError{Agent: req.AgentID, Why: ViewNotLatest}
	}
	return nil
}

// markingLock is a step lock that marks the host's view used once its entry
// is appended. A landing retried after the mark found the store unreachable
// (outage.go) only marks again: the entry is recorded, and appending it a
// second time would be refused as already recorded, telling the host its
// recorded step failed and leaving its view unmarked, so that a
// resubmission would land a second step.
type markingLock struct {
	StepLock
	mark func(context.Context, Entry) error
	got  *Entry // the entry appended, once it is
}

func (m *markingLock) Append(ctx context.Context, e Entry) (Entry, error) {
	return m.appendWith(ctx, e, m.StepLock.Append)
}

// AppendUncancelled is Append fenced by the cancels in the store's write
// where its lock can (UncancelledLanding), and Append where it cannot: the
// service's count under the session lock (lockLanding) is then the fence.
func (m *markingLock) AppendUncancelled(ctx context.Context, e Entry, cancels int) (Entry, error) {
	u, ok := m.StepLock.(UncancelledLanding)
	if !ok {
		return m.Append(ctx, e)
	}
	return m.appendWith(ctx, e, func(ctx context.Context, e Entry) (Entry, error) {
		return u.AppendUncancelled(ctx, e, cancels)
	})
}

// appendWith appends e with write, once, then marks the view used.
func (m *markingLock) appendWith(ctx context.Context, e Entry, write func(context.Context, Entry) (Entry, error)) (Entry, error) {
	if m.got == nil {
		got, err := write(ctx, e)
		if err != nil {
			return got, err
		}
		m.got = &got
	}
	if err := m.mark(ctx, *m.got); err != nil {
		return *m.got, fmt.Errorf("step %d is recorded, but its view could not be marked used: %w", m.got.Step, err)
	}
	return *m.got, nil
}

// submission fingerprints a host's submission: what must match for a
// resubmission to count as the same.
func submission(req StepRequest) string {
	h := sha256.New()
	for _, part := range []string{req.Action, req.Content, strings.TrimSpace(req.Target), strings.TrimSpace(req.Reason)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// replay answers a submission to a view that has already landed: the
// same submission gets the original step's result (an idempotent retry),
// any other an error naming the step it landed as. Nothing is written.
func (h hosts) replay(ctx context.Context, s *Session, req StepRequest, issued *IssuedView) (*StepResult, error) {
	if issued.Submission != submission(req) {
		return nil, &StaleViewError{Agent: req.AgentID, Why: ViewUsed, Landed: issued.Landed}
	}
	_, l, st, err := h.svc.sessions.load(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	var entry *Entry
	for i, e := range l.Agents[req.AgentID] {
		if e.Step == issued.Landed {
			entry = &l.Agents[req.AgentID][i]
		}
	}
	if entry == nil {
		return nil, fmt.Errorf("step %d of %s, which this view landed as, is not in the ledger; take a fresh view", issued.Landed, req.AgentID)
	}
	res := h.svc.snapshot(s, l, st)
	return h.svc.stepResult(s, *entry, st, res, res.Consensus), nil
}

// replayable tells whether a host's submission is a resubmission to a view
// that has landed (then it is answered whatever the session's state now).
func (h hosts) replayable(ctx context.Context, s *Session, req StepRequest) (*IssuedView, bool) {
	issued, err := h.svc.store.View(ctx, s.ID, req.AgentID)
	if err != nil || issued == nil || issued.Landed == 0 || checkIssued(req, issued) != nil {
		return nil, false
	}
	return issued, true
}

// labelAtStep is the label of an agent's latest answer at or before a step.
func labelAtStep(a *AgentState, step int) string {
	label := ""
	for _, e := range a.Entries {
		if e.Step <= step && e.Kind == KindAnswer {
			label = e.Label
		}
	}
	return label
}
