package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// startTeamArgs are start_team's arguments: the team settings.
type startTeamArgs struct {
	TeamSettings
}

// startTeamResult is what start_team returns.
type startTeamResult struct {
	SessionID  string         `json:"session_id" jsonschema_description:"The session's handle: pass it to step, team_status, finalize_team and cancel_team."`
	Agents     []startedAgent `json:"agents"`
	NextAgents []string       `json:"next_agents" jsonschema_description:"Agents due to act now: call step for each (in parallel if you like)."`
	Rules      Rules          `json:"rules"`
}

// startedAgent is one agent of a new team.
type startedAgent struct {
	ID      string `json:"id"`
	Backend string `json:"backend"`
	Model   string `json:"model"`
}

func startTeamTool(h *handler) server.ServerTool {
	tool := mcpgo.NewTool("start_team",
		mcpgo.WithDescription("Create a team to drive a step at a time (settings as run_team), "+
			"then step{session_id, agent_id} each of next_agents until a step says finished. Model host is you."),
		inputSchema[startTeamArgs](h.explainedBy("run_team")),
		annotations("Start a team", false, false, false),
	)
	return server.ServerTool{Tool: tool, Handler: typedHandler(h, tool, h.startTeam)}
}

func (h *handler) startTeam(ctx context.Context, req mcpgo.CallToolRequest, args startTeamArgs) (*mcpgo.CallToolResult, error) {
	spec, err := h.spec(args.TeamSettings, coordination.DriverStep)
	if err != nil {
		return nil, err
	}
	s, err := h.svc(ctx).Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	res, err := h.svc(ctx).Result(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	out := startTeamResult{SessionID: s.ID, Agents: []startedAgent{}, NextAgents: append([]string{}, res.NextAgents...), Rules: wireRules(s.Rules)}
	for _, a := range s.Agents {
		backend := ""
		if sp, err := providers.ParseSpec(a.Model); err == nil {
			backend = sp.Backend
		}
		out.Agents = append(out.Agents, startedAgent{ID: a.ID, Backend: backend, Model: providers.ShowSpec(a.Model)})
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Team %s created with %s:\n", s.ID, coordination.Count(len(s.Agents), "agent"))
	for _, a := range out.Agents {
		fmt.Fprintf(&b, "- %s: %s\n", a.ID, a.Model)
	}
	fmt.Fprintf(&b, "Rules: consensus %s, max_rounds %d, max_answers_per_agent %d, final %s, answer_format %s, timeout %gs\n",
		s.Rules.Consensus, s.Rules.MaxRounds, s.Rules.MaxAnswersPerAgent, s.Rules.Final, s.Rules.AnswerFormat, s.Rules.TimeoutSeconds)
	fmt.Fprintf(&b, "Next: call step{session_id: %q, agent_id} for each of %s.\n", s.ID, strings.Join(out.NextAgents, ", "))
	return mcpgo.NewToolResultStructured(out, b.String()), nil
}
