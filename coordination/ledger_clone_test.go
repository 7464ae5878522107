package coordination_test

import (
	"encoding/json"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestAnEntrysCloneSharesNothing: a clone's maps, slices and pointers are
// its own, and an empty seen_steps is nil, as stores read it back.
func TestAnEntrysCloneSharesNothing(t *testing.T) {
	cost := 0.5
	e := coordination.Entry{Kind: coordination.KindAnswer, SeenSteps: map[string]int{"agent_b": 2},
		Plan: json.RawMessage(`{"steps":[]}`), Concerns: []string{"a"}}
	e.Usage.CostUSD = &cost
	c := e.Clone()
	c.SeenSteps["agent_b"] = 9
	c.Plan[0] = '['
	c.Concerns[0] = "b"
	*c.Usage.CostUSD = 2
	if e.SeenSteps["agent_b"] != 2 || e.Plan[0] != '{' || e.Concerns[0] != "a" || *e.Usage.CostUSD != 0.5 {
		t.Errorf("changing the clone changed the entry: %+v", e)
	}
	if got := (coordination.Entry{SeenSteps: map[string]int{}}).Clone(); got.SeenSteps != nil {
		t.Errorf("an empty seen_steps cloned as %v, want nil", got.SeenSteps)
	}
}
