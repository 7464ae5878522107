package sim

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// chosenValue is the final value an action backs: the answer it writes or
// the shown answer it votes for.
func chosenValue(t *testing.T, req providers.Request, act providers.Action) string {
	t.Helper()
	name, args := call(t, act)
	if name == providers.ToolNewAnswer {
		return finalvalue.Of(args["content"])
	}
	for _, a := range req.Shown {
		if a.Alias == args["agent_id"] {
			return finalvalue.Of(a.Content)
		}
	}
	t.Fatalf("vote for %s, which was not shown", args["agent_id"])
	return ""
}

// adoptions counts, over many sessions, how often an agent holding 381 ends
// up backing value.
func adoptions(t *testing.T, spec, value string, shown ...string) int {
	t.Helper()
	p := mustSim(t, spec)
	n := 0
	for seed := range int64(400) {
		req := later(task, "agent_a", "agent1", seed, 2, shown...)
		if chosenValue(t, req, step(t, p, req)) == value {
			n++
		}
	}
	return n
}

func TestPositionBiasPullsTowardsTheFirstShownAnswer(t *testing.T) {
	const spec = "sim:revise=0:conformity=0.2:truth_bias=1"
	peerFirst := []string{"agent2", "I get 400.\nAnswer: 400", "agent3", "17 * 23 = 391.\nAnswer: 391", "agent1", "I get 381.\nAnswer: 381"}
	none := adoptions(t, spec, "400", peerFirst...)
	biased := adoptions(t, spec+":position_bias=2", "400", peerFirst...)
	if biased < none+40 {
		t.Errorf("the first shown answer was adopted %d times of 400 with position_bias 2, %d without: no pull", biased, none)
	}
	// The same answer shown second gets no pull.
	peerSecond := []string{"agent3", "17 * 23 = 391.\nAnswer: 391", "agent2", "I get 400.\nAnswer: 400", "agent1", "I get 381.\nAnswer: 381"}
	if second := adoptions(t, spec+":position_bias=2", "400", peerSecond...); second > none+20 {
		t.Errorf("an answer shown second was adopted %d times with position_bias 2, %d without", second, none)
	}
	// Shown its own answer first (no rotation), the agent holds on.
	ownFirst := []string{"agent1", "I get 381.\nAnswer: 381", "agent2", "I get 400.\nAnswer: 400", "agent3", "17 * 23 = 391.\nAnswer: 391"}
	kept := adoptions(t, spec+":position_bias=2", "381", ownFirst...)
	keptNone := adoptions(t, spec, "381", ownFirst...)
	if kept < keptNone+40 {
		t.Errorf("shown its own answer first, the agent kept it %d times with position_bias 2, %d without", kept, keptNone)
	}
}

func TestSelfBiasKeepsTheAgentsOwnAnswer(t *testing.T) {
	shown := []string{"agent2", "I get 400.\nAnswer: 400", "agent3", "17 * 23 = 391.\nAnswer: 391", "agent1", "I get 381.\nAnswer: 381"}
	const spec = "sim:revise=0:conformity=0.4"
	if loose, stubborn := adoptions(t, spec, "381", shown...), adoptions(t, spec+":self_bias=0.8", "381", shown...); stubborn < loose+60 {
		t.Errorf("kept its own answer %d times of 400 with self_bias 0.8, %d without", stubborn, loose)
	}
	// Before its first answer (blind_first off) there is nothing of its own
	// to prefer.
	peersOnly := []string{"agent2", "I get 400.\nAnswer: 400", "agent3", "I get 400 as well.\nAnswer: 400"}
	if a, b := adoptions(t, spec, "400", peersOnly...), adoptions(t, spec+":self_bias=0.8", "400", peersOnly...); a != b {
		t.Errorf("self_bias changed a step with no own answer: %d vs %d adoptions", a, b)
	}
}
