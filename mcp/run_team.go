package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// runTeamArgs are run_team's arguments: the team settings plus wait.
type runTeamArgs struct {
	TeamSettings
	Wait *bool `json:"wait,omitempty" jsonschema_description:"Absent: wait up to 50 s. true: wait to the end (needs a long client timeout). false: return at once."`
	// Estimate returns the team's worst case at list prices instead of
	// running it (estimate.go).
	Estimate bool `json:"estimate,omitempty" jsonschema_description:"Run nothing; return the worst-case cost (status estimate)."`
}

func runTeamTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("run_team",
		mcpgo.WithDescription("Run a team (or resume one by session_id): each agent answers, reads the others', then improves or votes until the votes agree. "+
			"Returns {session_id, status, winner, final_answer, votes, answers, usage, cost_usd}. "+
			"Waits up to 50 s with progress; on status running call run_team{session_id} again to wait more. Host agents need start_team."),
		inputSchema[runTeamArgs](),
		annotations("Run a team", false, false, true),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.runTeam)}
}

func (h *handler) runTeam(ctx context.Context, req mcpgo.CallToolRequest, args runTeamArgs) (*mcpgo.CallToolResult, error) {
	t := args.TeamSettings
	if args.Estimate {
		return h.estimate(ctx, t)
	}
	// A retry that brings human agents' replies (human.go) is about the
	// session the call asked for, even if the first call created it.
	st, retry := readRoundState(req)
	if retry && (t.SessionID == "" || t.SessionID == st.Session) {
		t.SessionID = st.Session
		h.deliverReplies(ctx, req, st.Session)
	}
	s, err := h.svc(ctx).CreateOrResume(ctx, coordination.RunRequest{
		SessionID: t.SessionID, Task: t.Task, Members: len(t.Models) > 0 || len(t.Agents) > 0, Team: t.hasTeam(),
		Spec: func() (coordination.TeamSpec, error) {
			spec, err := h.spec(t, coordination.DriverRun)
			if err == nil {
				err = canAskHumans(ctx, spec.Agents, spec.Models)
			}
			return spec, err
		},
	})
	if err != nil {
		return nil, err
	}
	if err := canAskHumans(ctx, s.Agents, nil); err != nil {
		return nil, err
	}
	ctx = h.askingHumans(ctx, s)
	how := waitLimited
	switch {
	case args.Wait != nil && *args.Wait:
		how = waitToEnd
	case args.Wait != nil:
		how = waitNot
	}
	run, ended, err := h.waitRun(ctx, req, s.ID, how)
	if err != nil {
		return nil, err
	}
	if !ended {
		if ask := h.askHumans(ctx, s.ID, st.Round); ask != nil {
			return ask, nil
		}
		return h.handle(ctx, s.ID)
	}
	res, err := run.Result()
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// The run stopped without a result of its own: finalize_team or
		// cancel_team stopped it from another request (coordination
		// reports that as an error), or it failed. The session says how it
		// stands.
		h.log.Warn().Err(err).Str("session", s.ID).Msg("run ended without a result")
		return h.handle(ctx, s.ID)
	}
	return teamResult(res), nil
}

// hearProgress subscribes to a session's run progress, for the request's
// progress notifications. It is closed by the caller, not by the request's
// end: what a run tells while it is cancelled is still read.
func (h *handler) hearProgress(ctx context.Context, id string) (*coordination.Subscription, error) {
	return h.svc(ctx).Subscribe(context.WithoutCancel(ctx), coordination.Filter{Sessions: []string{id}, Kinds: []coordination.ObservationKind{coordination.ObservedProgress}})
}

// tell reports what a run told (ObservedProgress) to the client.
func (p *progress) tell(heard []coordination.Observation) {
	for _, o := range heard {
		p.report(o.Progress.Message)
	}
}

// handle is the result of a run that goes on without the caller: the team
// result as it stands, status running.
func (h *handler) handle(ctx context.Context, id string) (*mcpgo.CallToolResult, error) {
	res, err := h.svc(ctx).Result(context.WithoutCancel(ctx), id)
	if err != nil {
		return nil, err
	}
	return teamResult(res), nil
}

// teamResult encodes a team result: the structured result plus a readable
// summary.
func teamResult(res *coordination.TeamResult) *mcpgo.CallToolResult {
	return mcpgo.NewToolResultStructured(wireTeamResult(*res), teamResultText(res))
}

// teamResultText renders a team result for a person or a model: the status,
// the result as every surface prints it (report.Result), and what to do next
// with the tools.
func teamResultText(res *coordination.TeamResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Team %s: %s\n", res.SessionID, res.Status)
	b.WriteString(report.Result(res))
	switch res.Status {
	case coordination.StatusRunning:
		fmt.Fprintf(&b, "\nThe team is still working (%s so far). Call run_team{session_id: %q} to wait for it again (up to 50 s a call), follow it with team_status{session_id: %q}, or stop it with cancel_team.\n", coordination.Count(res.Steps, "step"), res.SessionID, res.SessionID)
	case coordination.StatusDecided:
		fmt.Fprintf(&b, "\nThe team has decided; call finalize_team{session_id: %q} to write the final answer.\n", res.SessionID)
	case coordination.StatusInterrupted:
		fmt.Fprintf(&b, "\nThe process running the team died (last alive %s); nothing runs it now. Resume it with run_team{session_id: %q}.\n", coordination.LastAliveAt(res.LastAlive, time.RFC3339, time.UTC), res.SessionID)
	case coordination.StatusCancelled:
		fmt.Fprintf(&b, "\nThe session is cancelled and resumable: run_team{session_id: %q}, or step it again if you drive it with step.\n", res.SessionID)
	}
	return b.String()
}
