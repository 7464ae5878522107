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
	Wait *bool `json:"wait,omitempty" jsonschema_description:"Absent: block with progress for up to 50 s, then return the handle (status running) while the run goes on. true: block until the end (allow a long request timeout). false: return the handle at once."`
	// Estimate returns the team's worst case at list prices instead of
	// running it (estimate.go).
	Estimate bool `json:"estimate,omitempty" jsonschema_description:"true: run nothing; return the team's worst-case cost at list prices against its budget (status estimate)."`
}

func runTeamTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("run_team",
		mcpgo.WithDescription("Create a team (or resume one with session_id) and let the server run it: every agent answers, reads the others' answers, improves or votes, until the votes agree. "+
			"Returns the team result: winner, final_answer, votes, every agent's latest answer, usage and cost. "+
			"By default it blocks with progress for up to 50 s and then returns {session_id, status: running} while the run continues; follow it with team_status or wait with run_team{session_id, wait: true}. "+
			"Teams with host agents are refused: use start_team and step."),
		inputSchema[runTeamArgs](),
		mcpgo.WithOutputSchema[TeamResult](),
		annotations("Run a team", false, false, true),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.runTeam)}
}

func (h *handler) runTeam(ctx context.Context, req mcpgo.CallToolRequest, args runTeamArgs) (*mcpgo.CallToolResult, error) {
	t := args.TeamSettings
	if args.Estimate {
		return h.estimate(ctx, t)
	}
	s, err := h.svc(ctx).CreateOrResume(ctx, coordination.RunRequest{
		SessionID: t.SessionID, Task: t.Task, Members: len(t.Models) > 0 || len(t.Agents) > 0, Team: t.hasTeam(),
		Spec: func() (coordination.TeamSpec, error) { return h.spec(t, coordination.DriverRun) },
	})
	if err != nil {
		return nil, err
	}
	id := s.ID
	wait := args.Wait == nil || *args.Wait
	// The progress is subscribed to before the run starts: with fast models
	// a run can end before a later Subscribe.
	var p *progress
	var heard *coordination.Subscription
	if wait {
		if p = h.startProgress(ctx, req); p != nil {
			if heard, err = h.hearProgress(ctx, id); err != nil {
				p.stop()
				return nil, err
			}
			defer heard.Close()
		}
	}
	// A run slot is taken unless the run is already going; the call that
	// turns out not to start it (another request started it first) gives
	// the slot straight back.
	release := func() {}
	if _, running := h.svc(ctx).Running(id); !running {
		if release, err = h.runs.acquire(tenantOf(ctx)); err != nil {
			p.stop()
			return nil, err
		}
	}
	run, started, err := h.svc(ctx).Start(ctx, id)
	if err != nil {
		release()
		p.stop()
		return nil, err
	}
	if !started {
		release()
	} else {
		go func() {
			<-run.Done()
			release()
		}()
	}
	// Only the request that started a run may cancel it by going away; one
	// that merely waits on a run started by another just stops waiting.
	owner := started

	if !wait {
		return h.handle(ctx, id)
	}
	var limit <-chan time.Time
	if args.Wait == nil {
		t := time.NewTimer(h.opts.WaitLimit)
		defer t.Stop()
		limit = t.C
	}
	cancelled := false
waiting:
	for {
		select {
		case <-heard.Ready():
			p.tell(heard.Take())
		case <-run.Done():
			break waiting
		case <-limit:
			break waiting
		case <-ctx.Done():
			if owner {
				run.Cancel()
				<-run.Done()
			}
			cancelled = true
			break waiting
		}
	}
	// Progress must be fully written before the result (see progress.go):
	// what the run told before it ended is all queued.
	p.tell(heard.Take())
	heard.Close()
	p.stop()

	select {
	case <-run.Done():
	default:
		if cancelled {
			return nil, fmt.Errorf("stopped waiting for %s: %w", id, context.Cause(ctx))
		}
		return h.handle(ctx, id)
	}
	res, err := run.Result()
	if err != nil {
		if cancelled {
			return nil, err
		}
		// The run stopped without a result of its own: finalize_team or
		// cancel_team stopped it from another request (coordination
		// reports that as an error), or it failed. The session says how it
		// stands.
		h.log.Warn().Err(err).Str("session", id).Msg("run ended without a result")
		return h.handle(ctx, id)
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
		fmt.Fprintf(&b, "\nThe team is still working (%s so far). Follow it with team_status{session_id: %q}, wait for the end with run_team{session_id: %q, wait: true}, or stop it with cancel_team.\n", coordination.Count(res.Steps, "step"), res.SessionID, res.SessionID)
	case coordination.StatusDecided:
		fmt.Fprintf(&b, "\nThe team has decided; call finalize_team{session_id: %q} to write the final answer.\n", res.SessionID)
	case coordination.StatusInterrupted:
		fmt.Fprintf(&b, "\nThe process running the team died (last alive %s); nothing runs it now. Resume it with run_team{session_id: %q}.\n", coordination.LastAliveAt(res.LastAlive, time.RFC3339, time.UTC), res.SessionID)
	case coordination.StatusCancelled:
		fmt.Fprintf(&b, "\nThe session is cancelled and resumable: run_team{session_id: %q}, or step it again if you drive it with step.\n", res.SessionID)
	}
	return b.String()
}
