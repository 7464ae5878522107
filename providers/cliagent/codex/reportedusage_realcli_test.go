package codex

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestRealCodexAgainstAServerReportingUsageIsChargedItAndFitsABudgetOfIt:
// the estimate the step counts while a run has reported nothing is never
// added to what the server then reports, nor kept in place of it: a run
// is charged what its server reported, and a token and cost budget the
// run fits do not stop it, though the rollout reports its calls only after
// each response and the stream its usage only when the turn ends.
func TestRealCodexAgainstAServerReportingUsageIsChargedItAndFitsABudgetOfIt(t *testing.T) {
	per := fake.Usage{Input: 20000, Output: 137}
	run := func(set func(*providers.Request)) providers.Usage {
		h := newReal(t, nil)
		h.script.SetOwnUsage(per)
		h.script.Add(model,
			fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "answer.txt", Content: "391\n"}}, Usage: &per},
			fake.Reply{Kind: fake.ReplyNewAnswer, Content: "17 * 23 = 391; see answer.txt", Usage: &per},
		)
		req := h.request(clitest.AnswerTool, clitest.VoteTool("agent1", "agent2"))
		set(&req)
		act, u, err := h.step(t, 120*time.Second, req)
		if err != nil {
			t.Fatalf("err = %v (usage %+v)", err, u)
		}
		if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
			t.Fatalf("action = %+v", act)
		}
		return u
	}
	clitest.AssertChargedWhatTheServerReportedWithinABudget(t, per, run)
}
