package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// applyChangesArgs are apply_changes's arguments.
type applyChangesArgs struct {
	SessionID string `json:"session_id"`
	// Config is what to do with the tool configuration among the changes
	// (changes.config): "include" (only when the user asked for those
	// files) or "skip"; "" refuses the apply while there is any. Neither
	// a description nor an enum in the schema: the tool's description and
	// the refusal say it, within tools/list's budget.
	Config string `json:"tool_config,omitempty"`
}

// applyChangesTool writes a finished team's pending changes to its write
// context: the step between the preview a result shows (changes,
// changes_pending) and the project, which a write context never reaches
// without it unless the operator's team file says apply: auto.
func applyChangesTool(h *handler) server.ServerTool {
	yes, no := true, false
	tool := mcpgo.NewTool("apply_changes",
		mcpgo.WithDescription("Write a finished team's changes (result.changes) to its write context once approved, all or nothing; "+
			"changes.config needs tool_config. Returns {session_id, applied, already_applied}."),
		inputSchema[applyChangesArgs](),
		// It overwrites and deletes project files: destructive, so a
		// client asks before calling it; a second call writes nothing.
		mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{Title: "Apply changes", DestructiveHint: &yes, IdempotentHint: &yes, OpenWorldHint: &no}),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.applyChanges)}
}

func (h *handler) applyChanges(ctx context.Context, req mcpgo.CallToolRequest, args applyChangesArgs) (*mcpgo.CallToolResult, error) {
	// The user is asked before their project is written when the client
	// can be asked (applyconfirm.go); a client that cannot elicit has
	// already confirmed the call itself (the tool is destructive, so a
	// client asks before calling it). Whether the call may write, and so
	// whether to ask, is the core's rule (ConfirmApply): a call that would
	// write nothing (already applied, nothing pending, tool configuration
	// held) is answered without asking.
	if args.Config != "" && args.Config != "include" && args.Config != "skip" {
		return nil, fmt.Errorf("%w: apply_changes's tool_config is %q; give include, skip, or leave it out", errBadArguments, args.Config)
	}
	opts := coordination.ApplyOptions{IncludeConfig: args.Config == "include", SkipConfig: args.Config == "skip"}
	var action *string
	if team := h.svc(ctx).ConfirmApply(ctx, args.SessionID, opts); team != nil && canElicit(ctx) == nil {
		reply, ask := askUser(req, applyID, roundState{Session: args.SessionID, Round: 1}.String(), applyQuestion(team, args))
		if ask != nil {
			return ask, nil
		}
		a := replyAction(reply)
		if a != string(mcpgo.ElicitationResponseActionAccept) {
			out := ApplyResult{SessionID: args.SessionID, Confirmation: &a}
			return mcpgo.NewToolResultStructured(out, notAppliedText(args.SessionID, a)), nil
		}
		action = &a
	}
	res, err := h.svc(ctx).ApplyChanges(ctx, args.SessionID, opts)
	if err != nil {
		return nil, err
	}
	out := wireApplyResult(*res)
	out.Confirmation = action
	return mcpgo.NewToolResultStructured(out, applyText(out, res.ConfigStaysOut(opts, `tool_config "include"`, `"skip"`))), nil
}

// applyText says what an apply wrote, file by file; staysOut is why asking
// for the tool configuration wrote none (ApplyResult.ConfigStaysOut), or "".
func applyText(r ApplyResult, staysOut string) string {
	var b strings.Builder
	a := r.Applied
	if r.AlreadyApplied {
		fmt.Fprintf(&b, "Already applied: session %s's changes were written to %s before; nothing was written now.\n", r.SessionID, a.Context)
	} else {
		fmt.Fprintf(&b, "Applied session %s's changes to %s: %d written, %d skipped.\n", r.SessionID, a.Context, len(a.Written), len(a.Skipped))
	}
	for _, c := range a.Written {
		fmt.Fprintf(&b, "  %s %s%s\n", c.Op, permissions.Shown(c.Path), workspace.Noted(c.Reason))
	}
	for _, c := range a.Conflicts {
		fmt.Fprintf(&b, "  conflict: %s (%s): %s\n", permissions.Shown(c.Path), c.Op, c.Reason)
	}
	for _, c := range a.Skipped {
		fmt.Fprintf(&b, "  skipped: %s (%s): %s\n", permissions.Shown(c.Path), c.Op, c.Reason)
	}
	if staysOut != "" {
		b.WriteString(staysOut + "; if the user wants it after all, they copy it from the winner's files (the result's files_dir).\n")
	}
	return b.String()
}
