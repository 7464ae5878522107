package mcp

import (
	"context"
	"errors"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// runTeamArgs are run_team's arguments: the team settings plus wait.
type runTeamArgs struct {
	TeamSettings
	Wait *bool `json:"wait,omitempty" jsonschema_description:"Default: 50 s; true: to the end; false: at once."`
	// Estimate returns the team's worst case at list prices instead of
	// running it (estimate.go).
	Estimate bool   `json:"estimate,omitempty" jsonschema_description:"Run nothing; return the worst-case cost."`
	Detail   string `json:"detail,omitempty" jsonschema:"enum=brief,enum=full" jsonschema_description:"full: whole answers, not previews."`
}

func runTeamTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("run_team",
		mcpgo.WithDescription("Run a team: agents answer, read each other's, improve or vote until they agree. "+
			"Returns {session_id, status, winner, final_answer, votes, answers, usage, cost_usd}. "+
			"Waits 50 s; on status running call run_team{session_id} again. Host agents need start_team."),
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
	narrowing, err := clientPermissions(t.Permissions)
	if err != nil {
		return nil, err
	}
	s, err := h.svc(ctx).CreateOrResume(ctx, coordination.RunRequest{
		SessionID: t.SessionID, Task: t.Task, Previous: t.ContinueFrom, Members: len(t.Models) > 0 || len(t.Agents) > 0, Team: t.hasTeam(),
		Permissions: narrowing,
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
	// A client that declared the tasks extension gets a task (tasks.go),
	// unless the team asks a person: a task's questions would need
	// tasks/update, which run_team does not speak.
	if wantsTask(ctx) && !retry && len(humanAgents(s.Agents, nil)) == 0 {
		if res, made, err := h.runAsTask(ctx, req, s.ID, args.Detail == detailFull); made {
			return res, err
		}
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
	if errors.Is(err, coordination.ErrSessionRunning) && how == waitNot {
		// Another replica runs it: the call that does not wait says so.
		err, ended = nil, false
	}
	if err != nil {
		return nil, err
	}
	full := args.Detail == detailFull
	if !ended {
		if ask := h.askHumans(ctx, s.ID, st.Round); ask != nil {
			return ask, nil
		}
		return h.handle(ctx, s.ID, full)
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
		return h.handle(ctx, s.ID, full)
	}
	return teamResultAs(res, full), nil
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
func (h *handler) handle(ctx context.Context, id string, full bool) (*mcpgo.CallToolResult, error) {
	res, err := h.svc(ctx).Result(context.WithoutCancel(ctx), id)
	if err != nil {
		return nil, err
	}
	return teamResultAs(res, full), nil
}

// teamResultText renders a team result whole for a person or a model: the
// status, the result as every surface prints it (report.Result), and what
// to do next with the tools.
func teamResultText(res *coordination.TeamResult) string {
	return fmt.Sprintf("Team %s: %s\n", res.SessionID, res.Status) + clientPlace.Result(res) + nextStep(res)
}
