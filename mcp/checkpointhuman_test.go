package mcp

import (
	"testing"
)

// A checkpoint with a human reviewer, from a client that cannot ask its user,
// must not hand back a verdict that reads as the whole review's: run_team
// refuses such a team before anything is written (canAskHumans), and a team
// that shrinks says so (docs/DESIGN.md, "A team that shrinks says so").
// checkpoint did neither: the human reviewer's step failed, and the verdict
// of the model alone came back with no word of the person who never saw
// it. A checkpoint now refuses a human reviewer up front.
func TestACheckpointWithAHumanReviewerNobodyCanAskSaysSo(t *testing.T) {
	_, ts := tenantServer(t, nil)
	alice, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))

	// run_team refuses the same team up front.
	wantError(t, callTool(t, alice, "run_team", `{"task":"x","models":["human","sim"],"wait":true}`), "", "human agents")

	res := callTool(t, alice, "checkpoint", `{"objective":"delete the old build cache on my laptop","models":["human","sim"]}`)
	if !res.IsError {
		t.Fatalf("checkpoint returned a verdict without its human reviewer:\n%s", text(res))
	}
	wantError(t, res, "bad_input", "asks no person")
}
