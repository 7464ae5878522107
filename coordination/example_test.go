package coordination_test

import (
	"context"
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// A Service runs the protocol over a store; Create makes a session and Run
// drives it to its end with the server's run loop. Sim agents with a fixed
// seed and one call at a time give the same ledger every time.
func ExampleService_Run() {
	ctx := context.Background()
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Parallel: 1})
	seed := int64(1)
	s, err := svc.Create(ctx, coordination.TeamSpec{
		Task:   "What is 17 * 23?",
		Models: []string{"sim/strong", "sim/strong", "sim"},
		Seed:   &seed,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, *res.StopReason, len(res.Answers), "answers")
	// Output: finished consensus 3 answers
}

// With DriverStep the caller drives: each Step runs one agent's step (the
// server calls that agent's model) and says who may step next. The step that
// settles the session decides it.
func ExampleService_Step() {
	ctx := context.Background()
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open})
	seed := int64(2)
	s, err := svc.Create(ctx, coordination.TeamSpec{
		Task:   "What is the capital of Australia?",
		Models: []string{"sim/strong", "sim/strong"},
		Seed:   &seed,
		Driver: coordination.DriverStep,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	next := s.AgentIDs()
	for steps := 0; len(next) > 0 && steps < 20; steps++ {
		res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: next[0]})
		if err != nil {
			fmt.Println(err)
			return
		}
		if res.Finished {
			fmt.Println("finished after", steps+1, "steps:", *res.Result.HowChosen)
			return
		}
		next = res.NextAgents
	}
	// Output: finished after 4 steps: consensus
}
