package claudecode

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestRealClaudeAgainstAServerReportingUsageIsChargedItAndFitsABudgetOfIt:
// the estimate the step counts for a model call whose usage has not come
// yet is never added to what the server then reports, nor kept in place of
// it: a run is charged what its server reported, and a token and cost
// budget the run fits do not stop it.
func TestRealClaudeAgainstAServerReportingUsageIsChargedItAndFitsABudgetOfIt(t *testing.T) {
	per := fake.Usage{Input: 20000, Output: 137}
	run := func(set func(*providers.Request)) providers.Usage {
		h := newReal(t)
		h.script.SetOwnUsage(per)
		input, _ := json.Marshal(map[string]string{"file_path": filepath.Join(h.inside, "answer.txt"), "old_string": "", "new_string": "391\n"})
		h.script.Add("claude-opus-4-6",
			fake.Reply{Kind: fake.ReplyToolCall, Tool: "Edit", Input: input, Usage: &per},
			fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"17 * 23 = 391; see answer.txt"}`), Usage: &per},
			fake.Reply{Kind: fake.ReplyText, Content: "Submitted.", Usage: &per},
		)
		req := h.request(clitest.AnswerTool, clitest.VoteTool("agent1", "agent2"))
		set(&req)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		act, u, err := h.p.Step(ctx, req)
		h.calls(t)
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
