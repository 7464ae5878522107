package coordination_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// What a step tool returns names the agent as everything people read does:
// id and model first, the anonymous label after, in brackets.
func TestStepLineLeadsWithAgentAndModelThenTheLabel(t *testing.T) {
	ctx := context.Background()
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open})
	seed := int64(4)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 6 * 7?", Models: []string{"sim/strong", "sim"}, Seed: &seed, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := regexp.MustCompile(`^agent_a \(sim/strong\) answered \[agent[12]\.1\]$`); !want.MatchString(res.Line()) {
		t.Errorf("line %q, want %s", res.Line(), want)
	}
}
