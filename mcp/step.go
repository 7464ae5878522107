package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// stepArgs are step's arguments.
type stepArgs struct {
	SessionID string         `json:"session_id"`
	AgentID   string         `json:"agent_id" jsonschema_description:"Normally one of next_agents."`
	Action    string         `json:"action,omitempty" jsonschema:"enum=new_answer,enum=vote" jsonschema_description:"A host agent's submission; omit to step a model agent or get a host's view."`
	Content   string         `json:"content,omitempty" jsonschema_description:"With new_answer: the answer."`
	Target    string         `json:"target,omitempty" jsonschema_description:"With vote: one of vote_enum (agentN) or a label (agentN.k)."`
	Reason    string         `json:"reason,omitempty" jsonschema_description:"With vote: why."`
	SeenSteps map[string]int `json:"seen_steps,omitempty" jsonschema_description:"With an action: the seen_steps returned beside the view, unchanged."`
	AfterStep *int           `json:"after_step,omitempty"`
}

func stepTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("step",
		mcpgo.WithDescription("One agent's step in a start_team session. A model agent: the server calls it. "+
			"A host agent (you): without action, returns its view (prompt, actions, vote_enum) and seen_steps; then submit new_answer+content or vote+target+reason with that seen_steps. "+
			"Returns {action, label, consensus, next_agents, finished, result}. On status running (after 50 s) make the call in its next."),
		inputSchema[stepArgs](),
		annotations("Step one agent", false, false, true),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.step)}
}

func (h *handler) step(ctx context.Context, req mcpgo.CallToolRequest, args stepArgs) (*mcpgo.CallToolResult, error) {
	if args.Action == "" && (args.Content != "" || args.Target != "" || args.Reason != "" || len(args.SeenSteps) > 0) {
		return nil, fmt.Errorf("%w: content, target, reason and seen_steps go with an action; set action to new_answer or vote, or leave them all out to step the agent", coordination.ErrBadAction)
	}
	if args.Action != "" && args.AfterStep != nil {
		return nil, fmt.Errorf("%w: after_step continues a model agent's step; leave it out with an action (a host's submission is answered again as it is)", coordination.ErrBadAction)
	}
	if args.AfterStep != nil && *args.AfterStep < 0 {
		return nil, fmt.Errorf("%w: after_step is a step number, 0 or more; copy it from the next of a status running reply", coordination.ErrBadAction)
	}
	// The agent's latest step as this step begins: a status running
	// reply's next names it (after_step), so its retry, on this server or
	// any other sharing the store, gets this step and never takes another.
	var began atomic.Int64
	began.Store(-1)
	p := h.startProgress(ctx, req)
	p.report(args.AgentID + " is stepping")
	step := func(ctx context.Context) (*coordination.StepResult, error) {
		return h.svc(ctx).Step(ctx, coordination.StepRequest{
			SessionID: args.SessionID,
			AgentID:   args.AgentID,
			Action:    args.Action,
			Content:   args.Content,
			Target:    args.Target,
			Reason:    args.Reason,
			SeenSteps: args.SeenSteps,
			After:     args.AfterStep,
			Began:     func(after int) { began.Store(int64(after)) },
		})
	}
	next := func() any {
		if n := began.Load(); n >= 0 && args.AfterStep == nil {
			again := args
			after := int(n)
			again.AfterStep = &after
			return again
		}
		return args
	}
	var res *coordination.StepResult
	var pending *mcpgo.CallToolResult
	var err error
	if args.Action == "" {
		// A model agent's step may take minutes (pending.go); a host's
		// submission is quick and is never joined by another.
		// A call that joined the step, or collects it as its continuation,
		// is answered with the session as it stands now (StepNow).
		restate := func(ctx context.Context, v any) (any, error) {
			return h.svc(ctx).StepNow(ctx, v.(*coordination.StepResult))
		}
		res, pending, err = awaitFlight(h, ctx, flightCall{tool: "step", args: args, next: next, session: args.SessionID, agent: args.AgentID, what: args.AgentID + "'s step", restate: restate}, step)
	} else {
		res, err = step(ctx)
	}
	// Progress must be fully written before the result (see progress.go).
	p.stop()
	if err != nil || pending != nil {
		return pending, err
	}
	return stepResult(res), nil
}

// stepResult encodes a step result with a readable account of it.
func stepResult(res *coordination.StepResult) *mcpgo.CallToolResult {
	var b strings.Builder
	switch res.Action {
	case "view":
		v := res.View
		fmt.Fprintf(&b, "View for %s (host agent). Allowed actions: %s.", res.AgentID, strings.Join(v.Actions, ", "))
		if len(v.VoteEnum) > 0 {
			fmt.Fprintf(&b, " Vote targets: %s.", strings.Join(v.VoteEnum, ", "))
		}
		if v.Revote {
			b.WriteString(" This is a re-vote: only vote is allowed.")
		}
		fmt.Fprintf(&b, "\nSubmit with step{session_id: %q, agent_id: %q, action, …, seen_steps: %s}.\n", res.SessionID, res.AgentID, seenJSON(res.SeenSteps))
		if res.Message != "" {
			fmt.Fprintf(&b, "Note: %s\n", res.Message)
		}
		fmt.Fprintf(&b, "\n--- system ---\n%s\n\n--- prompt ---\n%s\n", v.System, v.Prompt)
		return mcpgo.NewToolResultStructured(wireStepResult(*res), b.String())
	default:
		b.WriteString(res.Line() + ".\n")
	}
	if res.Result != nil {
		b.WriteString(teamResultText(res.Result))
		return mcpgo.NewToolResultStructured(wireStepResult(*res), b.String())
	}
	next := "nobody (other steps are in flight)"
	if len(res.NextAgents) > 0 {
		next = strings.Join(res.NextAgents, ", ")
	}
	fmt.Fprintf(&b, "Next agents: %s.\n", next)
	return mcpgo.NewToolResultStructured(wireStepResult(*res), b.String())
}

// seenJSON renders seen_steps as the JSON object to pass back.
func seenJSON(seen map[string]int) string {
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q: %d", k, seen[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
