package mcp

import (
	"strings"
	"testing"
)

// A checkpoint with a human reviewer, from a client that cannot ask its user,
// must not hand back a verdict that reads as the whole review's: run_team
// refuses such a team before anything is written (canAskHumans), and a team
// that shrinks says so (docs/DESIGN.md, "A team that shrinks says so").
// checkpoint does neither: the human reviewer's step fails, and the verdict
// of the model alone comes back with no word of the person who never saw it.
func TestACheckpointWithAHumanReviewerNobodyCanAskSaysSo(t *testing.T) {
	_, ts := tenantServer(t, nil)
	alice, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))

	// run_team refuses the same team up front.
	wantError(t, callTool(t, alice, "run_team", `{"task":"x","models":["human","sim"],"wait":true}`), "", "human agents")

	res := callTool(t, alice, "checkpoint", `{"objective":"delete the old build cache on my laptop","models":["human","sim"]}`)
	if res.IsError {
		return // refused up front, as run_team does: fine
	}
	body := text(res)
	if !strings.Contains(body, "human") && !strings.Contains(strings.ToLower(body), "dropped") {
		t.Fatalf("checkpoint returned a verdict without its human reviewer and says nothing of it:\n%s", body)
	}
}
