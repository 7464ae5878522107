package report_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// TestARunningSessionsVotesAreMetSoFarNotReached: a running session whose
// standing votes meet its rule is not said to have reached consensus (a
// later answer may make the votes stale): the graph, the map and the
// summary say the rule is met so far; once it ended on agreement they say
// reached, and a session that ended otherwise, not reached.
func TestARunningSessionsVotesAreMetSoFarNotReached(t *testing.T) {
	v := splitView()
	v.Result.Winner = nil
	v.Result.Status = coordination.StatusRunning
	v.Result.Consensus.Reached, v.Result.Consensus.RuleMet = false, true
	for what, out := range map[string]string{"graph": report.VoteGraph(v), "map": report.ConsensusMapSVG(v), "summary": report.Markdown(v)} {
		if !strings.Contains(out, "met so far, not final") || strings.Contains(out, "— reached") {
			t.Errorf("running, the rule met by the votes so far: the %s says\n%s", what, out)
		}
	}
	v.Result.Status = coordination.StatusCancelled
	if g := report.VoteGraph(v); !strings.Contains(g, "— not reached") {
		t.Errorf("cancelled, never ended on agreement: the graph says\n%s", g)
	}
}
