package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// runTeamArgs are run_team's arguments: the team settings plus wait.
type runTeamArgs struct {
	TeamSettings
	Wait *bool `json:"wait,omitempty" jsonschema_description:"Absent: block with progress for up to 50 s, then return the handle (status running) while the run goes on. true: block until the end (allow a long request timeout). false: return the handle at once."`
}

func runTeamTool(e *env) server.ServerTool {
	tool := mcpgo.NewTool("run_team",
		mcpgo.WithDescription("Create a team (or resume one with session_id) and let the server run it: every agent answers, reads the others' answers, improves or votes, until the votes agree. "+
			"Returns the team result: winner, final_answer, votes, every agent's latest answer, usage and cost. "+
			"By default it blocks with progress for up to 50 s and then returns {session_id, status: running} while the run continues; follow it with team_status or wait with run_team{session_id, wait: true}. "+
			"Teams with host agents are refused: use start_team and step."),
		inputSchema[runTeamArgs](),
		mcpgo.WithOutputSchema[coordination.TeamResult](),
		annotations("Run a team", false, false, true),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(e, tool, e.runTeam)}
}

func (e *env) runTeam(ctx context.Context, req mcpgo.CallToolRequest, args runTeamArgs) (*mcpgo.CallToolResult, error) {
	id, err := e.sessionToRun(ctx, args.TeamSettings)
	if err != nil {
		return nil, err
	}
	wait := args.Wait == nil || *args.Wait
	// The progress reporter is subscribed as the run starts: with fast models
	// a run can end before a later Subscribe.
	var p *progress
	var watch func(coordination.Progress)
	if wait {
		p = e.startProgress(ctx, req)
		watch = func(pr coordination.Progress) { p.report(pr.Message) }
	}
	before, wasRunning := e.svc(ctx).Running(id)
	release := func() {}
	if !wasRunning {
		if release, err = e.runs.acquire(tenantOf(ctx)); err != nil {
			p.stop()
			return nil, err
		}
	}
	run, unsubscribe, err := e.svc(ctx).StartWatching(ctx, id, watch)
	if err != nil {
		release()
		p.stop()
		return nil, err
	}
	go func() {
		<-run.Done()
		release()
	}()
	// Only the request that started a run may cancel it by going away; one
	// that merely waits on a run started earlier just stops waiting.
	owner := !wasRunning || before != run

	if !wait {
		return e.handle(ctx, id)
	}
	var limit <-chan time.Time
	if args.Wait == nil {
		t := time.NewTimer(e.opts.WaitLimit)
		defer t.Stop()
		limit = t.C
	}
	cancelled := false
	select {
	case <-run.Done():
	case <-limit:
	case <-ctx.Done():
		if owner {
			run.Cancel()
			<-run.Done()
		}
		cancelled = true
	}
	unsubscribe()
	// Progress must be fully written before the result (see progress.go).
	p.stop()

	select {
	case <-run.Done():
	default:
		if cancelled {
			return nil, fmt.Errorf("stopped waiting for %s: %w", id, context.Cause(ctx))
		}
		return e.handle(ctx, id)
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
		e.log.Warn().Err(err).Str("session", id).Msg("run ended without a result")
		return e.handle(ctx, id)
	}
	return teamResult(res), nil
}

// sessionToRun creates the session run_team will run, or names the existing
// one given by session_id. (Create refuses host teams before anything is
// written.)
func (e *env) sessionToRun(ctx context.Context, t TeamSettings) (string, error) {
	if t.SessionID != "" {
		s, err := e.svc(ctx).Store().Session(ctx, t.SessionID)
		switch {
		case err == nil && (len(t.Models) > 0 || len(t.Agents) > 0):
			// A team given with the id: identical settings join the
			// session (Create is idempotent), different ones are refused.
		case err == nil:
			if task := strings.TrimSpace(t.Task); task != "" && task != strings.TrimSpace(s.Task) {
				return "", fmt.Errorf("%w: session %s exists with another task; leave the task out to resume it, or choose another session_id", coordination.ErrSessionExists, s.ID)
			}
			// A retry of the same call, or a resume: the stored team and rules
			// stand.
			return s.ID, nil
		case !errors.Is(err, coordination.ErrSessionNotFound):
			return "", err
		case !t.hasTeam():
			return "", err
		}
	}
	spec, err := e.spec(t, coordination.DriverRun)
	if err != nil {
		return "", err
	}
	s, err := e.svc(ctx).Create(ctx, spec)
	if err != nil {
		return "", err
	}
	return s.ID, nil
}

// handle is the result of a run that goes on without the caller: the team
// result as it stands, status running.
func (e *env) handle(ctx context.Context, id string) (*mcpgo.CallToolResult, error) {
	res, err := e.svc(ctx).Result(context.WithoutCancel(ctx), id)
	if err != nil {
		return nil, err
	}
	return teamResult(res), nil
}

// teamResult encodes a team result: the structured result plus a readable
// summary.
func teamResult(res *coordination.TeamResult) *mcpgo.CallToolResult {
	return mcpgo.NewToolResultStructured(res, teamResultText(res))
}

// teamResultText renders a team result for a person or a model: the outcome,
// the final answer, and what to do next.
func teamResultText(res *coordination.TeamResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Team %s: %s\n", res.SessionID, res.Status)
	b.WriteString(res.Summary())
	if res.FinalAnswer != nil {
		fmt.Fprintf(&b, "\nFinal answer:\n%s\n", strings.TrimRight(*res.FinalAnswer, "\n"))
	}
	switch res.Status {
	case coordination.StatusRunning:
		fmt.Fprintf(&b, "\nThe team is still working (%s so far). Follow it with team_status{session_id: %q}, wait for the end with run_team{session_id: %q, wait: true}, or stop it with cancel_team.\n", coordination.Count(res.Steps, "step"), res.SessionID, res.SessionID)
	case coordination.StatusDecided:
		fmt.Fprintf(&b, "\nThe team has decided; call finalize_team{session_id: %q} to write the final answer.\n", res.SessionID)
	case coordination.StatusCancelled:
		fmt.Fprintf(&b, "\nThe session is cancelled and resumable: run_team{session_id: %q}, or step it again if you drive it with step.\n", res.SessionID)
	}
	return b.String()
}
