package mcp

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// checkpointArgs are checkpoint's arguments.
type checkpointArgs struct {
	Objective      string          `json:"objective,omitempty" jsonschema_description:"What you are about to do, where, and what it changes (new checkpoints)."`
	DraftPlan      Plan            `json:"draft_plan,omitempty" jsonschema_description:"Your plan for the team to check; omit to have one written."`
	ActionGoals    []ActionGoal    `json:"action_goals,omitempty" jsonschema_description:"Actions to approve as exact tool calls (plan steps name their goal_id)."`
	EvalCriteria   []criterionArg  `json:"eval_criteria,omitempty" jsonschema_description:"Besides the safety policy; exactly one must."`
	SafetyPolicy   []string        `json:"safety_policy,omitempty" jsonschema_description:"Rules added to the built-in policy."`
	Models         []string        `json:"models,omitempty" jsonschema_description:"Reviewers' model specs, as run_team."`
	Agents         []agentArg      `json:"agents,omitempty" jsonschema_description:"Reviewers with personas, instead of models."`
	Context        []reviewContext `json:"context,omitempty" jsonschema_description:"Text, or files under the allowed roots."`
	TimeoutSeconds float64         `json:"timeout_seconds,omitempty" jsonschema_description:"Default 1800, then the best review wins."`
	SessionID      string          `json:"session_id,omitempty" jsonschema_description:"New id (a retry with it joins), or one to resume."`
	// Confirm asks the user, through the client, before a proceed verdict
	// is returned (checkpoint_confirm.go).
	Confirm bool `json:"confirm,omitempty" jsonschema_description:"Ask the user to confirm a proceed verdict (elicitation)."`
}

// reviewContext is one piece of a checkpoint's context: a review reads text
// and files, never a project directory.
type reviewContext struct {
	Text string `json:"text,omitempty"`
	Path string `json:"path,omitempty"`
}

func checkpointTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("checkpoint",
		mcpgo.WithDescription("Before a risky, hard-to-undo step (deleting data, production, credentials, money): a review team fixes a plan of exact approved calls and rollbacks, and votes a verdict. "+
			"Returns {session_id, status, verdict, plan, concerns, votes}. proceed: make only the plan's approved calls; revise: fix the concerns, checkpoint again; refuse: don't. "+
			"Waits up to 50 s; on status running call checkpoint{session_id} again."),
		inputSchema[checkpointArgs](h.explainedBy("run_team", "agents", "eval_criteria")),
		annotations("Review a risky step", false, false, true),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.checkpoint)}
}

func (h *handler) checkpoint(ctx context.Context, req mcpgo.CallToolRequest, args checkpointArgs) (*mcpgo.CallToolResult, error) {
	if args.Confirm {
		if err := canElicit(ctx); err != nil {
			return nil, err
		}
		if st, ok := readRoundState(req); ok {
			return h.confirmed(ctx, req, st.Session, args.Objective)
		}
	}
	spec, err := h.checkpointSpec(args)
	if err != nil {
		return nil, err
	}
	id, err := checkpoint.Session(ctx, h.svc(ctx), spec)
	if err != nil {
		return nil, err
	}
	run, ended, err := h.waitRun(ctx, req, id, waitLimited)
	if err != nil {
		return nil, err
	}
	var res *coordination.TeamResult
	if ended {
		if res, err = run.Result(); err != nil {
			return nil, err
		}
	} else if res, err = h.svc(ctx).Result(context.WithoutCancel(ctx), id); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("the checkpoint was stopped (session %s, resumable with checkpoint{session_id}): %w", id, context.Cause(ctx))
	}
	out, err := checkpoint.Outcome(context.WithoutCancel(ctx), h.svc(ctx), id, res)
	if err != nil {
		return nil, err
	}
	if args.Confirm && proceeds(out) {
		return h.confirmProceed(req, out, args.Objective), nil
	}
	return mcpgo.NewToolResultStructured(wireCheckpointResult(*out), checkpointText(out)), nil
}

// checkpointSpec turns the arguments into a coordination checkpoint spec; the
// service checks the review itself, so only the MCP-only parts — context
// files and criteria numbering — are handled here.
func (h *handler) checkpointSpec(a checkpointArgs) (checkpoint.Spec, error) {
	spec := checkpoint.Spec{
		Objective:    a.Objective,
		DraftPlan:    a.DraftPlan.plan(),
		ActionGoals:  actionGoals(a.ActionGoals),
		SafetyPolicy: a.SafetyPolicy,
		Models:       a.Models,
		SessionID:    a.SessionID,
		Rules:        coordination.Rules{TimeoutSeconds: a.TimeoutSeconds},
	}
	if err := spec.Rules.Validate(); err != nil {
		return spec, err
	}
	if len(a.Objective) > MaxTaskBytes {
		return spec, fmt.Errorf("%w: the objective is %s, over the limit of %s; say what you are about to do and keep the material for context", coordination.ErrBadInput, sizeText(int64(len(a.Objective))), sizeText(MaxTaskBytes))
	}
	for _, ag := range a.Agents {
		spec.Agents = append(spec.Agents, coordination.Agent{ID: ag.ID, Model: ag.Model, SystemMessage: ag.SystemMessage, Temperature: ag.Temperature})
	}
	// A review asks no person (its run has nobody to ask): a human
	// reviewer's step would fail and the verdict come back as the whole
	// team's without them.
	if humans := humanAgents(spec.Agents, spec.Models); len(humans) > 0 {
		return spec, fmt.Errorf("%w: a checkpoint's reviewers are models the server runs, and a checkpoint asks no person, so %s cannot review; name models only, and ask your user yourself before you act on the verdict", coordination.ErrBadInput, strings.Join(humans, ", "))
	}
	var err error
	var dirs []workspace.Context
	context := make([]contextArg, len(a.Context))
	for i, c := range a.Context {
		context[i] = contextArg{Text: c.Text, Path: c.Path}
	}
	if spec.Context, dirs, err = readContext(context, h.opts.clientPaths(), h.opts.WriteRoots); err != nil {
		return spec, err
	}
	if len(dirs) > 0 {
		return spec, fmt.Errorf("%w: a checkpoint reviews a plan; give it files or text as context, not directories", coordination.ErrBadInput)
	}
	if spec.Criteria, err = criteriaItems(a.EvalCriteria); err != nil {
		return spec, err
	}
	return spec, nil
}

// checkpointText renders a checkpoint result for a person or a model: the
// verdict, what to do with it, the concerns, then the winning review.
func checkpointText(res *checkpoint.Result) string {
	var b strings.Builder
	if res.Status == coordination.StatusRunning {
		fmt.Fprintf(&b, "Checkpoint %s: the reviewers are still working (%s so far). Call checkpoint{session_id: %q} to wait for the verdict again (up to 50 s a call).\n", res.SessionID, coordination.Count(res.Steps, "step"), res.SessionID)
		return b.String()
	}
	if res.Verdict == nil {
		fmt.Fprintf(&b, "Checkpoint %s: %s, no verdict (%s).\n", res.SessionID, res.Status, cmp.Or(coordination.Deref(res.StopReason), "no stop reason"))
		if res.Status == coordination.StatusCancelled {
			fmt.Fprintf(&b, "Resume it with checkpoint{session_id: %q}.\n", res.SessionID)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "Checkpoint %s: verdict %s (%s, %s; %d-step plan).\n", res.SessionID, *res.Verdict, cmp.Or(coordination.Deref(res.HowChosen), "?"), res.Winner.Label, len(res.Plan))
	switch *res.Verdict {
	case checkpoint.VerdictProceed:
		b.WriteString("Carry out the plan step by step, making only its approved calls; on a failed step follow its recovery.\n")
	case checkpoint.VerdictRevise:
		b.WriteString("Do not carry it out yet: change what the concerns say, then call checkpoint again.\n")
	case checkpoint.VerdictRefuse:
		b.WriteString("Do not carry it out.\n")
	}
	for _, c := range res.Concerns {
		if len(c.Concerns) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nConcerns of %s (%s, verdict %s):\n", c.Label, c.AgentID, c.Verdict)
		for _, x := range c.Concerns {
			fmt.Fprintf(&b, "- %s\n", x)
		}
	}
	if res.FinalAnswer != nil {
		fmt.Fprintf(&b, "\nWinning review (%s):\n%s\n", res.Winner.Label, strings.TrimRight(*res.FinalAnswer, "\n"))
	}
	return b.String()
}
