package mcp

import (
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// apply_changes asks the user, through the client, before it writes a
// team's changes into their project: the changes (each file's op and lines)
// are what they confirm. A client that cannot ask (no elicitation, as
// `claude -p`) gets today's behaviour: the tool is annotated destructive, so
// the client's own approval of the call is the user's consent; refusing
// would strand a headless build flow whose user already said "apply".

// applyID names the apply question among a call's questions.
const applyID = "apply"

// applyQuestion is what the user reads: where the changes go and what they
// are, file by file; an empty form, accepting is the confirmation.
// Tool configuration comes first, each file with what it can run, and says
// whether this call writes it (it is asked only with tool_config).
func applyQuestion(res *coordination.TeamResult, args applyChangesArgs) mcpgo.ElicitationParams {
	c := res.Changes
	var b strings.Builder
	fmt.Fprintf(&b, "Write team %s's changes into %s? %s (+%d −%d lines).\n", res.SessionID, c.Context, coordination.Count(c.Count, "file"), c.Added, c.Removed)
	if c.ConfigCount > 0 {
		what := "left out by this call" // the only other: no tool_config is refused unasked
		if args.Config == "include" {
			what = "WRITTEN by this call"
		}
		fmt.Fprintf(&b, "Tool configuration — %s your own tools run code from, outside any sandbox; %s:\n", coordination.Count(c.ConfigCount, "file"), what)
		for i, f := range c.Config {
			if i == 10 {
				fmt.Fprintf(&b, "… and %d more\n", c.ConfigCount-i)
				break
			}
			fmt.Fprintf(&b, "%s %s: %s\n", f.Op, cutText(permissions.Shown(f.Path), 200), f.Runs)
		}
		b.WriteString("All the changes:\n")
	}
	for i, f := range c.Files {
		if i == 20 {
			fmt.Fprintf(&b, "… and %d more\n", c.Count-i)
			break
		}
		switch {
		case f.Binary || f.Link:
			fmt.Fprintf(&b, "%s %s (%d bytes)\n", f.Op, cutText(permissions.Shown(f.Path), 200), f.Bytes)
		default:
			fmt.Fprintf(&b, "%s %s (+%d −%d)\n", f.Op, cutText(permissions.Shown(f.Path), 200), f.Added, f.Removed)
		}
	}
	b.WriteString("Accept to write them; files changed since the run refuse the whole apply.")
	return mcpgo.ElicitationParams{
		Message:         cutText(b.String(), 4000),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
}

// notAppliedText is what a model reads when the user did not accept.
func notAppliedText(session, action string) string {
	if action == string(mcpgo.ElicitationResponseActionDecline) {
		return fmt.Sprintf("The user declined: nothing was written. Session %s's changes stay pending; do not apply them unless the user asks.\n", session)
	}
	return fmt.Sprintf("The user cancelled: nothing was written. Session %s's changes stay pending; apply_changes{session_id: %q} asks again.\n", session, session)
}
