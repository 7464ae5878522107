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

// printPermissions is status's permissions section: the counts, the asks
// waiting for a person (with the command that answers each) and the latest
// decisions that were not plain allows. Nothing when the session made none.
func printPermissions(ctx context.Context, out io.Writer, svc *coordination.Service, id string) {
	c, err := svc.CountPermissions(ctx, id)
	if err != nil || c.Decisions+c.Pending == 0 {
		return
	}
	fmt.Fprintf(out, "\n## Permissions\n\n%s (permissions.jsonl)\n", c)
	pending, _ := svc.PendingApprovals(ctx, id)
	for _, r := range pending {
		left := time.Until(r.Expires).Round(time.Second)
		fmt.Fprintf(out, "- waiting: %s asks to %s (%s; risk %s; %s left): massgen-mcp approve %s, or deny %s\n",
			r.Agent, r.Action, r.Rule, r.Risk, max(left, 0), r.ID, r.ID)
	}
	recs, _ := svc.PermissionLog(ctx, id)
	var shown []permissions.Record
	for i := len(recs) - 1; i >= 0 && len(shown) < statusDecisionsShown; i-- {
		if recs[i].Outcome != permissions.Allowed {
			shown = append(shown, recs[i])
		}
	}
	for i := len(shown) - 1; i >= 0; i-- {
		r := shown[i]
		by := r.Rule
		if r.By != "" {
			by += "; " + r.By
		}
		fmt.Fprintf(out, "- %s %s %s: %s (%s)\n", r.Time.Format("15:04:05"), r.Agent, r.Outcome, r.Action, by)
	}
}
