package coordination

import "testing"

// Item 7: finish_reason is completed whenever the session has a winner,
// error only for a failed session (no answer), whatever the stop reason.
func TestFinishReasonIsCompletedWheneverThereIsAWinner(t *testing.T) {
	w := &Winner{AgentID: "agent_a", Label: "agent1.1"}
	str := func(s string) *string { return &s }
	cases := []struct {
		res  TeamResult
		want string
	}{
		{TeamResult{Status: StatusFinished, Winner: w, StopReason: str(StopConsensus)}, "completed"},
		{TeamResult{Status: StatusFinished, Winner: w, StopReason: str(StopAgentsFailed), HowChosen: str(ChosenForcedFirst)}, "completed"},
		{TeamResult{Status: StatusFinished, Winner: w, StopReason: str(StopTimeout)}, "completed"},
		{TeamResult{Status: StatusFailed, StopReason: str(StopAgentsFailed)}, "error"},
		{TeamResult{Status: StatusFailed, StopReason: str(StopTimeout)}, "timeout"},
		{TeamResult{Status: StatusCancelled}, "cancelled"},
		{TeamResult{Status: StatusRunning}, "in_progress"},
		{TeamResult{Status: StatusDecided, Winner: w}, "in_progress"},
	}
	for _, c := range cases {
		if got := finishReason(&c.res); got != c.want {
			t.Errorf("%s/%s winner=%v: finish_reason %q, want %q", c.res.Status, Deref(c.res.StopReason), c.res.Winner != nil, got, c.want)
		}
	}
}
