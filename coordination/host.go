package coordination

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/massgen-go/massgen-mcp/providers"
)

// hostView shows a host agent the prompt its model would get and records the
// seen_steps it was issued. A view never takes the step lock.
func (svc *Service) hostView(ctx context.Context, s *Session, agentID string) (*StepResult, error) {
	unlock, err := svc.store.LockSession(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	_, l, st, err := svc.load(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	v := svc.view(s, st, agentID)
	if err := svc.store.SaveView(ctx, s.ID, agentID, IssuedView{SeenSteps: v.SeenSteps, Revote: v.Revote, IssuedAt: svc.now()}); err != nil {
		return nil, err
	}
	res := svc.snapshot(s, l, st)
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

// hostSubmit records a host agent's action, checked against the latest view
// issued to it.
func (svc *Service) hostSubmit(ctx context.Context, s *Session, req StepRequest) (*StepResult, error) {
	lock, st, err := svc.stepState(ctx, s, req.AgentID)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	issued, err := svc.store.View(ctx, s.ID, req.AgentID)
	if err != nil {
		return nil, err
	}
	switch {
	case len(req.SeenSteps) == 0:
		return nil, fmt.Errorf("%w: seen_steps is missing; call step without an action for a view, then submit with its seen_steps", ErrStaleView)
	case issued == nil:
		return nil, fmt.Errorf("%w: no view was issued to %s; call step without an action first", ErrStaleView, req.AgentID)
	case !maps.Equal(issued.SeenSteps, req.SeenSteps):
		return nil, fmt.Errorf("%w: ask for a fresh view (step without an action) and submit with its seen_steps", ErrStaleView)
	}
	v := svc.view(s, st, req.AgentID)
	// The entry records what the host saw when its view was issued, so a vote
	// cast on an outdated view is stale, exactly as a slow model's would be.
	v.SeenSteps = issued.SeenSteps
	for name := range v.labelOf {
		n, _, _ := parseAnon(name)
		if a := st.AgentByAnon(n); a != nil {
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
	entry.Agent, entry.Time = req.AgentID, svc.now()
	entry.DurationSeconds = svc.now().Sub(issued.IssuedAt).Seconds()
	return svc.land(ctx, s, lock, v, entry, true)
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
