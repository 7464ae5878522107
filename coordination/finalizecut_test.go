package coordination_test

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAFinalizeWhoseRequestEndsInTheFinalCallFinishesTheSession: the
// caller of Finalize goes away while the final call runs. The session
// finishes with the winner's answer, saying why, as a run stopped in its
// final call does; before, it was left decided for good, with no run and
// no lease, so nothing finished it.
func TestAFinalizeWhoseRequestEndsInTheFinalCallFinishesTheSession(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	inFinal := make(chan struct{}, 2)
	presenting(provs, func(ctx context.Context, _ providers.Request) (providers.Action, providers.Usage, error) {
		inFinal <- struct{}{}
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	bothAnswered(t, h.Service, sc, s.ID)
	bg := context.Background()
	ctx, cancel := context.WithCancel(bg)
	go func() { <-inFinal; cancel() }()
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatalf("Finalize cut short in its final call: %v", err)
	}
	if res.Status != coordination.StatusFinished || res.Winner == nil || !strings.Contains(res.FinalNote, "ended while the final call was pending") {
		t.Fatalf("result %s, winner %v, note %q; want finished with the winner's answer and why", res.Status, res.Winner, res.FinalNote)
	}
	v, err := h.Service.Status(bg, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusFinished {
		t.Fatalf("the session reads %s after the finalize was cut short, want finished", v.Result.Status)
	}
}

// presenting has every provider of provs answer a final call (present)
// with present, and every other call as before.
func presenting(provs map[string]providers.Provider, present providers.Func) {
	for m, inner := range provs {
		provs[m] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.Purpose == providers.PurposePresent {
				return present(ctx, req)
			}
			return inner.Step(ctx, req)
		})
	}
}

// bothAnswered has the two agents of session id answer once ("4" and
// "four"), stepped by the service: a session ready to be decided.
func bothAnswered(t *testing.T, svc *coordination.Service, sc []*coordtest.Scripted, id string) {
	t.Helper()
	sc[0].Replies = []any{coordtest.Answer("4")}
	sc[1].Replies = []any{coordtest.Answer("four")}
	for _, a := range []string{"agent_a", "agent_b"} {
		if _, err := svc.Step(context.Background(), coordination.StepRequest{SessionID: id, AgentID: a}); err != nil {
			t.Fatal(err)
		}
	}
}
