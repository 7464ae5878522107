package checkpoint_test

// The helpers coordination's tests drive a service with, as the review tests
// need them.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// fnProvider is a provider written inline in a test.
type fnProvider func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error)

func (f fnProvider) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	return f(ctx, req)
}

// scripted plays a fixed list of replies, one per call; past the end it votes
// for the first name offered (or answers if it may only answer).
type scripted struct {
	mu      sync.Mutex
	replies []any // providers.Action or error
	calls   []providers.Request
}

func (s *scripted) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, req)
	u := providers.Free()
	u.Input, u.Output = 10, 5
	if len(s.replies) == 0 {
		if len(req.VoteEnum) > 0 && hasTool(req, providers.ToolVote) {
			return act(providers.VoteCall(req.VoteEnum[0], "fallback")), u, nil
		}
		return act(providers.NewAnswerCall(fmt.Sprintf("fallback answer %s %d", req.AgentID, req.StepNumber))), u, nil
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	switch r := r.(type) {
	case error:
		return providers.Action{}, u, r
	case providers.Action:
		return r, u, nil
	}
	panic("bad script")
}

func (s *scripted) requests() []providers.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]providers.Request(nil), s.calls...)
}

func hasTool(req providers.Request, name string) bool {
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func act(calls ...providers.ToolCall) providers.Action { return providers.Action{Calls: calls} }

func vote(anon string) providers.Action { return act(providers.VoteCall(anon, "best")) }

// harness is a service over a memory store whose agents use the given
// providers, keyed by model spec.
type harness struct {
	t     *testing.T
	store *memstore.Store
	svc   *coordination.Service
	provs map[string]providers.Provider
}

func newHarness(t *testing.T, provs map[string]providers.Provider) *harness {
	h := &harness{t: t, store: memstore.New(), provs: provs}
	h.svc = coordination.NewService(h.store, coordination.Options{Open: h.open, Parallel: 8, Reviews: checkpoint.Reviews{}})
	return h
}

func (h *harness) open(sp providers.Spec) (providers.Provider, error) {
	if p, ok := h.provs[sp.String()]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("no test provider for %s", sp.String())
}

func (h *harness) ledger(id string) *coordination.Ledger {
	h.t.Helper()
	l, err := h.store.Ledger(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return l
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// team gives n agents their own scripted providers; models[i] is agent i's
// model spec and scripts[i] its provider.
func scriptedTeam(t *testing.T, n int) (models []string, scripts []*scripted, provs map[string]providers.Provider) {
	provs = map[string]providers.Provider{}
	for i := 0; i < n; i++ {
		sp, err := providers.ParseSpec(fmt.Sprintf("sim:seed=%d", 100+i))
		if err != nil {
			t.Fatal(err)
		}
		sc := &scripted{}
		models = append(models, sp.String())
		scripts = append(scripts, sc)
		provs[sp.String()] = sc
	}
	return models, scripts, provs
}

func simService(parallel int) (*coordination.Service, *memstore.Store) {
	st := memstore.New()
	return coordination.NewService(st, coordination.Options{Open: backends.Open, Parallel: parallel, Reviews: checkpoint.Reviews{}}), st
}
