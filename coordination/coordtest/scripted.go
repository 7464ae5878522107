package coordtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Scripted is a provider that plays Replies, a providers.Action or an error
// each, one per call; past the end it votes for the first name offered (or
// answers, if it may only answer). Every call costs nothing and counts 10
// input and 5 output tokens. Set Replies before the session runs.
type Scripted struct {
	Replies []any

	mu    sync.Mutex
	calls []providers.Request
}

// Step plays the next reply and records the request.
func (s *Scripted) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, req)
	u := providers.Free()
	u.Input, u.Output = 10, 5
	if len(s.Replies) == 0 {
		if len(req.VoteEnum) > 0 && HasTool(req, providers.ToolVote) {
			return Act(providers.VoteCall(req.VoteEnum[0], "fallback")), u, nil
		}
		return Act(providers.NewAnswerCall(fmt.Sprintf("fallback answer %s %d", req.AgentID, req.StepNumber))), u, nil
	}
	r := s.Replies[0]
	s.Replies = s.Replies[1:]
	switch r := r.(type) {
	case error:
		return providers.Action{}, u, r
	case providers.Action:
		return r, u, nil
	}
	panic(fmt.Sprintf("coordtest: a Scripted reply is a providers.Action or an error, not %T", r))
}

// Requests returns the requests the provider was called with, in order.
func (s *Scripted) Requests() []providers.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]providers.Request(nil), s.calls...)
}

// Team gives n agents a Scripted provider each: models[i] is agent i's model
// spec (sim:seed=100+i, so each opens its own) and scripts[i] its provider;
// provs maps one to the other, as New takes them.
func Team(t testing.TB, n int) (models []string, scripts []*Scripted, provs map[string]providers.Provider) {
	t.Helper()
	provs = map[string]providers.Provider{}
	for i := range n {
		sp, err := providers.ParseSpec(fmt.Sprintf("sim:seed=%d", 100+i))
		if err != nil {
			t.Fatal(err)
		}
		sc := &Scripted{}
		models = append(models, sp.String())
		scripts = append(scripts, sc)
		provs[sp.String()] = sc
	}
	return models, scripts, provs
}

// HasTool says whether the request offers the model the named tool.
func HasTool(req providers.Request, name string) bool {
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Act is a reply made of the given tool calls.
func Act(calls ...providers.ToolCall) providers.Action { return providers.Action{Calls: calls} }

// Answer is a reply that submits a new answer.
func Answer(content string) providers.Action { return Act(providers.NewAnswerCall(content)) }

// Vote is a reply that votes for the answer under the alias, with the reason
// "best".
func Vote(alias string) providers.Action { return Act(providers.VoteCall(alias, "best")) }
