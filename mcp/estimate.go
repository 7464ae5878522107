package mcp

import (
	"context"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// estimate is run_team{estimate: true}: the team is checked as run_team
// would check it (operator-only settings included) and its worst case at
// list prices is returned; nothing is written, run or spent.
func (h *handler) estimate(ctx context.Context, t TeamSettings) (*mcpgo.CallToolResult, error) {
	if t.SessionID != "" && !t.hasTeam() && t.Task == "" {
		return nil, fmt.Errorf("%w: estimate takes a new team (task with models, agents or a team), not a session to resume", coordination.ErrBadInput)
	}
	spec, err := h.spec(t, coordination.DriverRun)
	if err != nil {
		return nil, err
	}
	e, err := h.svc(ctx).Estimate(spec)
	if err != nil {
		return nil, err
	}
	w := wireEstimate(*e)
	res := TeamResult{Status: "estimate", Estimate: &w, Consensus: ConsensusView{Rule: string(spec.Rules.Consensus), Tally: map[string]int{}}, Votes: []VoteView{}, Answers: []AnswerView{}, NextAgents: []string{},
		Agents: []AgentUsage{}, Dropped: []DroppedAgent{}}
	return mcpgo.NewToolResultStructured(res, report.Estimate(e)), nil
}
