package providers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

type ctxKey struct{}

// TestFuncPassesTheCallThroughBothWays: Func's Step hands the function the
// caller's context and request untouched, and returns the function's action,
// usage and error as they are.
func TestFuncPassesTheCallThroughBothWays(t *testing.T) {
	boom := errors.New("boom")
	var seenCtx any
	var seenReq providers.Request
	var p providers.Provider = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		seenCtx, seenReq = ctx.Value(ctxKey{}), req
		return providers.Action{Text: "hello " + req.AgentID}, providers.Usage{Input: 7, Output: 3}, boom
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "the caller's")
	act, u, err := p.Step(ctx, providers.Request{AgentID: "agent_a", StepNumber: 4})
	if seenCtx != "the caller's" || seenReq.AgentID != "agent_a" || seenReq.StepNumber != 4 {
		t.Fatalf("the function saw context value %v and request %+v", seenCtx, seenReq)
	}
	if act.Text != "hello agent_a" || u.Input != 7 || u.Output != 3 || !errors.Is(err, boom) {
		t.Fatalf("Step returned %+v, %+v, %v; want the function's own", act, u, err)
	}
}

// A provider written inline: it answers every step with the agent's id.
func ExampleFunc() {
	echo := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		return providers.Action{Calls: []providers.ToolCall{providers.NewAnswerCall("I am " + req.AgentID)}}, providers.Free(), nil
	})
	act, _, _ := echo.Step(context.Background(), providers.Request{AgentID: "agent_b"})
	fmt.Println(act.Calls[0].Name, string(act.Calls[0].Args))
	// Output: new_answer {"content":"I am agent_b"}
}
