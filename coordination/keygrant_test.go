package coordination_test

import (
	"context"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// TestATeamAgentsKeyGrantIsKeptInTheSessionAndHandedToEveryOpen pins that a
// team file's word on an agent's key (Operator, KeyEnv) is written to
// session.json and reaches Open from a later process's step, so the agent's
// endpoint keeps its key; a client's agent with the same spec text opens
// without it, never sharing the team agent's provider.
func TestATeamAgentsKeyGrantIsKeptInTheSessionAndHandedToEveryOpen(t *testing.T) {
	const vllm = "vllm/qwen@http://127.0.0.1:9/v1"
	dir := t.TempDir()
	var mu sync.Mutex
	var grants []providers.KeyGrant
	open := func(sp providers.Spec) (providers.Provider, error) {
		if sp.Backend == "vllm" {
			mu.Lock()
			grants = append(grants, sp.Grant)
			mu.Unlock()
		}
		return sim.New(providers.Spec{Backend: "sim", Model: "sim"})
	}
	ctx := context.Background()
	team := coordination.NewService(filestore.New(dir), coordination.Options{Open: open})
	s, err := team.Create(ctx, coordination.TeamSpec{Task: "x", Driver: coordination.DriverStep, Agents: []coordination.Agent{
		{ID: "a", Model: vllm, Operator: true, KeyEnv: "DUMMY_VLLM_KEY"}, {ID: "b", Model: "sim"}}})
	if err != nil {
		t.Fatal(err)
	}
	later := coordination.NewService(filestore.New(dir), coordination.Options{Open: open})
	if _, err := later.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := later.Create(ctx, coordination.TeamSpec{Task: "x", Driver: coordination.DriverStep, Models: []string{vllm, "sim"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := providers.KeyGrant{Operator: true, KeyEnv: "DUMMY_VLLM_KEY"}
	if len(grants) != 3 || grants[0] != want || grants[1] != want || grants[2] != (providers.KeyGrant{}) {
		t.Fatalf("Open saw grants %+v; want the team's at create and at the later step, then none for the client's agent", grants)
	}
}
