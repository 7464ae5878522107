package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

// checkpoint{confirm: true} asks the user, through the client, to confirm a
// proceed verdict before the caller's irreversible step: the team reviews,
// the user decides. Only a proceed is asked about; revise and refuse already
// say not to go on.

// confirmID names the confirmation among a call's questions.
const confirmID = "confirm"

// proceeds tells whether a checkpoint ended with a proceed verdict.
func proceeds(out *checkpoint.Result) bool {
	return out.Status == coordination.StatusFinished && out.Verdict != nil && *out.Verdict == checkpoint.VerdictProceed
}

// confirmProceed asks the user to confirm a proceed verdict, or, on the retry
// that carries their reply, returns the result with it.
func (h *handler) confirmProceed(req mcpgo.CallToolRequest, out *checkpoint.Result, objective string) *mcpgo.CallToolResult {
	reply, ask := askUser(req, confirmID, roundState{Session: out.SessionID, Round: 1}.String(), confirmQuestion(out, objective))
	if ask != nil {
		return ask
	}
	action := replyAction(reply)
	wire := wireCheckpointResult(*out)
	wire.Confirmation = &action
	return mcpgo.NewToolResultStructured(wire, checkpointText(out)+confirmationText(action))
}

// confirmed answers the retry of checkpoint{confirm: true} that brings the
// user's reply: the review it asked about has ended, so its outcome is read,
// not run again.
func (h *handler) confirmed(ctx context.Context, req mcpgo.CallToolRequest, id, objective string) (*mcpgo.CallToolResult, error) {
	svc := h.svc(ctx)
	id, err := checkpoint.Session(ctx, svc, checkpoint.Spec{SessionID: id})
	if err != nil {
		return nil, err
	}
	res, err := svc.Result(ctx, id)
	if err != nil {
		return nil, err
	}
	out, err := checkpoint.Outcome(ctx, svc, id, res)
	if err != nil {
		return nil, err
	}
	if !proceeds(out) {
		// Nothing to confirm (a forged or stale state): the result as it is.
		return mcpgo.NewToolResultStructured(wireCheckpointResult(*out), checkpointText(out)), nil
	}
	return h.confirmProceed(req, out, objective), nil
}

// confirmQuestion is what the user reads: the objective, the plan's approved
// calls, and the concerns raised, so that they confirm what will be done.
func confirmQuestion(out *checkpoint.Result, objective string) mcpgo.ElicitationParams {
	var b strings.Builder
	fmt.Fprintf(&b, "A review team approved this step (verdict proceed, checkpoint %s). Confirm to let it go ahead.\n", out.SessionID)
	if objective != "" {
		fmt.Fprintf(&b, "\nObjective: %s\n", cutText(objective, 1000))
	}
	if len(out.Plan) > 0 {
		b.WriteString("\nPlan:\n")
		for _, s := range out.Plan {
			fmt.Fprintf(&b, "%d. [%s] %s", s.Step, s.Kind, cutText(s.Description, 200))
			if s.ApprovedCall != nil {
				fmt.Fprintf(&b, " — calls %s", s.ApprovedCall.Tool)
			}
			b.WriteString("\n")
		}
	}
	var concerns []string
	for _, c := range out.Concerns {
		concerns = append(concerns, c.Concerns...)
	}
	if len(concerns) > 0 {
		b.WriteString("\nConcerns raised:\n")
		for i, c := range concerns {
			if i == 5 {
				fmt.Fprintf(&b, "- and %d more\n", len(concerns)-5)
				break
			}
			fmt.Fprintf(&b, "- %s\n", cutText(c, 200))
		}
	}
	return mcpgo.ElicitationParams{
		Message: cutText(b.String(), 4000),
		// No field: accepting is the confirmation.
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
}

// confirmationText is the line a model reads about the user's reply.
func confirmationText(action string) string {
	switch action {
	case string(mcpgo.ElicitationResponseActionAccept):
		return "\nThe user confirmed: go ahead with the plan.\n"
	case string(mcpgo.ElicitationResponseActionDecline):
		return "\nThe user declined: do not carry it out.\n"
	}
	return "\nThe user cancelled the confirmation: do not carry it out unless they say so.\n"
}

// cutText shortens text for a person's dialog, marking the cut.
func cutText(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	r := []rune(s[:n])
	return string(r[:max(0, len(r)-1)]) + "…"
}
