package filestore

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// finish_reason is completed whenever the session has a winner, error only
// for a failed session (no answer), whatever the stop reason.
func TestFinishReasonIsCompletedWheneverThereIsAWinner(t *testing.T) {
	type res = coordination.TeamResult
	w := &coordination.Winner{AgentID: "agent_a", Label: "agent1.1"}
	str := func(s string) *string { return &s }
	stop := func(s coordination.StopReason) *coordination.StopReason { return &s }
	cases := []struct {
		res  res
		want string
	}{
		{res{Status: coordination.StatusFinished, Winner: w, StopReason: stop(coordination.StopConsensus)}, "completed"},
		{res{Status: coordination.StatusFinished, Winner: w, StopReason: stop(coordination.StopAgentsFailed), HowChosen: str(coordination.ChosenForcedFirst)}, "completed"},
		{res{Status: coordination.StatusFinished, Winner: w, StopReason: stop(coordination.StopTimeout)}, "completed"},
		{res{Status: coordination.StatusFailed, StopReason: stop(coordination.StopAgentsFailed)}, "error"},
		{res{Status: coordination.StatusFailed, StopReason: stop(coordination.StopTimeout)}, "timeout"},
		{res{Status: coordination.StatusCancelled}, "cancelled"},
		{res{Status: coordination.StatusRunning}, "in_progress"},
		{res{Status: coordination.StatusDecided, Winner: w}, "in_progress"},
	}
	for _, c := range cases {
		if got := finishReason(&c.res); got != c.want {
			t.Errorf("%s/%s winner=%v: finish_reason %q, want %q", c.res.Status, coordination.Deref(c.res.StopReason), c.res.Winner != nil, got, c.want)
		}
	}
}
