package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// statusDecisionsShown is how many of the latest decisions status lists.
const statusDecisionsShown = 10

// statusPermissions is status's permissions section, as data: the counts,
// the asks waiting for a person (with the commands that answer each) and the
// latest decisions that were not plain allows. The plain status prints it;
// status --json carries it as "permissions".
type statusPermissions struct {
	Counts  coordination.PermissionCounts `json:"counts"`
	Pending []pendingAsk                  `json:"pending"`
	Recent  []permissions.Record          `json:"recent"`
}

// pendingAsk is one ask waiting for a person, with what answers it.
type pendingAsk struct {
	permissions.ApprovalRequest
	Approve string `json:"approve"`
	Deny    string `json:"deny"`
}

// sessionPermissions gathers the section; nil when the session made no
// decision and has no ask waiting. flags name the store and tenant in the
// commands that answer (storeFlags).
func sessionPermissions(ctx context.Context, svc *coordination.Service, id, flags string) *statusPermissions {
	c, err := svc.CountPermissions(ctx, id)
	if err != nil || c.Decisions+c.Pending == 0 {
		return nil
	}
	p := &statusPermissions{Counts: c, Pending: []pendingAsk{}, Recent: []permissions.Record{}}
	pending, _ := svc.PendingApprovals(ctx, id)
	for _, r := range pending {
		p.Pending = append(p.Pending, pendingAsk{ApprovalRequest: r, Approve: "massgen-mcp approve" + flags + " " + r.ID, Deny: "massgen-mcp deny" + flags + " " + r.ID})
	}
	recs, _ := svc.PermissionLog(ctx, id)
	for i := len(recs) - 1; i >= 0 && len(p.Recent) < statusDecisionsShown; i-- {
		if recs[i].Notable() {
			p.Recent = append(p.Recent, recs[i])
		}
	}
	// Oldest first, as the log reads.
	for i, j := 0, len(p.Recent)-1; i < j; i, j = i+1, j-1 {
		p.Recent[i], p.Recent[j] = p.Recent[j], p.Recent[i]
	}
	return p
}

// printPermissions prints the section for a person; nothing when the
// session made no decision.
func printPermissions(ctx context.Context, out io.Writer, svc *coordination.Service, id, flags string) {
	p := sessionPermissions(ctx, svc, id, flags)
	if p == nil {
		return
	}
	fmt.Fprintf(out, "\n## Permissions\n\n%s (permissions.jsonl)\n", p.Counts)
	for _, r := range p.Pending {
		left := time.Until(r.Expires).Round(time.Second)
		// An ask's action, rule and command were Shown where it was made;
		// a record's are as decided, Shown here.
		fmt.Fprintf(out, "- waiting: %s asks to %s (%s; risk %s; %s left): %s, or deny %s\n",
			permissions.Shown(r.Agent), r.Action.Screened(), permissions.Screened(r.Rule), r.Risk, max(left, 0), r.Approve, r.ID)
		if r.Command != "" {
			fmt.Fprintf(out, "  in the whole command, all of which a yes runs: %s\n", permissions.Screened(r.Command))
		}
	}
	for _, r := range p.Recent {
		by := r.Rule
		if r.By != "" {
			by += "; " + r.By
		}
		fmt.Fprintf(out, "- %s %s %s: %s (%s)\n", r.Time.Format("15:04:05"), permissions.Shown(r.Agent), r.Outcome, r.Action.Shown(), permissions.Shown(by))
	}
}

// statusJSON is status --json: the status data team_status returns, and
// the permissions section beside it.
type statusJSON struct {
	*coordination.StatusView
	Permissions *statusPermissions `json:"permissions,omitempty"`
}
