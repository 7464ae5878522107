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
	Objective      string         `json:"objective,omitempty" jsonschema_description:"What you are about to do, where, and what it changes, in full (e.g. drop table legacy_orders in the production database). Required unless session_id names an existing checkpoint."`
	DraftPlan      Plan           `json:"draft_plan,omitempty" jsonschema_description:"Your own plan, in the plan schema: the team verifies and corrects it rather than writing one. Leave it out to have the team write the plan."`
	ActionGoals    []ActionGoal   `json:"action_goals,omitempty" jsonschema_description:"Actions that need approval at the level of a tool call; the plan's action step for each names it in goal_id and carries the exact approved_call."`
	EvalCriteria   []criterionArg `json:"eval_criteria,omitempty" jsonschema_description:"Criteria the reviewers judge plans by, beside the safety policy; exactly one must."`
	SafetyPolicy   []string       `json:"safety_policy,omitempty" jsonschema_description:"Rules added to the built-in policy (destruction and reversibility, production and shared data, credentials, external recipients, money, scope), e.g. \"Never touch the billing schema.\""`
	Models         []string       `json:"models,omitempty" jsonschema_description:"Reviewers' model specs, one agent each (e.g. claude, openai/gpt-5.4, sim/strong offline). Give models or agents, not both; neither means the default team."`
	Agents         []agentArg     `json:"agents,omitempty" jsonschema_description:"Reviewers with ids and personas (e.g. a security reviewer), instead of models. Host agents cannot review."`
	Context        []contextArg   `json:"context,omitempty" jsonschema_description:"What the reviewers should know: text blocks (what you have checked, the environment), or file paths under the server's allowed roots."`
	TimeoutSeconds float64        `json:"timeout_seconds,omitempty" jsonschema_description:"Wall time of the review in seconds (default 1800); past it the best review so far wins."`
	SessionID      string         `json:"session_id,omitempty" jsonschema_description:"Id for the new review session; or an existing checkpoint session to resume (if cancelled) or read (if finished)."`
}

func checkpointTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("checkpoint",
		mcpgo.WithDescription("Before a risky or hard-to-undo step (deleting or migrating data, production changes, credentials, messages to outside recipients, payments), have a team review it. "+
			"Each reviewer writes (or, with draft_plan, verifies and corrects) a step-by-step plan — verify, backup, action with its exact approved tool call and rollback, verify, notify — and a verdict: proceed, revise or refuse. "+
			"The team votes; the result is the winning verdict and plan, every reviewer's concerns, the votes and the session_id (team_status works on it). "+
			"Follow a proceed plan step by step and make only its approved calls; on revise, change what the concerns say and checkpoint again; on refuse, do not do it. "+
			"Blocks with progress until the verdict."),
		inputSchema[checkpointArgs](),
		mcpgo.WithOutputSchema[CheckpointResult](),
		annotations("Review a risky step", false, false, true),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.checkpoint)}
}

func (h *handler) checkpoint(ctx context.Context, req mcpgo.CallToolRequest, args checkpointArgs) (*mcpgo.CallToolResult, error) {
	spec, err := h.checkpointSpec(args)
	if err != nil {
		return nil, err
	}
	release, err := h.runs.acquire(tenantOf(ctx))
	if err != nil {
		return nil, err
	}
	defer release()
	p := h.startProgress(ctx, req)
	res, err := checkpoint.Run(ctx, h.svc(ctx), spec, func(pr coordination.Progress) { p.report(pr.Message) })
	// Progress must be fully written before the result (see progress.go).
	p.stop()
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("the checkpoint was stopped (session %s, resumable with checkpoint{session_id}): %w", res.SessionID, context.Cause(ctx))
	}
	return mcpgo.NewToolResultStructured(wireCheckpointResult(*res), checkpointText(res)), nil
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
	var err error
	var dirs []workspace.Context
	if spec.Context, dirs, err = readContext(a.Context, h.opts.contextRoots(), h.opts.WriteRoots); err != nil {
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
