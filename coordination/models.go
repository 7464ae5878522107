package coordination

import (
	"fmt"
	"sync"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// models opens the providers of the model specs steps name, once each.
type models struct {
	open Opener // nil: this service cannot call models
	// mu is held while a spec is opened, so two steps naming one spec
	// open it once.
	mu sync.Mutex
	// opened: model spec string and key grant → providers.Provider, opened
	// once (under mu). Clients name any specs, so it is capped by size, the
	// least used let go (and opened again when named again).
	opened *lru[string, providers.Provider]
	// byAgent: an agent's model text and key grant → the provider opened
	// for their spec, so that a step finds its provider without parsing
	// the spec and formatting its key again (4 % of the CPU of the
	// 1,000-session benchmark). Only what parsed and opened is kept;
	// capped as opened is. An entry outliving its spec's in opened keeps
	// the provider it found, as a step in flight does.
	byAgent *lru[agentModel, providers.Provider]
}

// agentModel is what an agent's provider depends on (Agent.Spec).
type agentModel struct {
	model    string
	operator bool
	keyEnv   string
	by       string
	// The agent's own prices (Agent.PriceIn, PriceOut; -1 when none): two
	// agents on one model priced apart must not share a wrapped provider.
	priceIn, priceOut float64
}

func newModels(open Opener) *models {
	return &models{open: open, opened: newLRU[string, providers.Provider](openedMax),
		byAgent: newLRU[agentModel, providers.Provider](openedMax)}
}

// agent returns (and caches) the provider of an agent: its spec's,
// pricing at the agent's own prices what comes back without a cost.
func (ms *models) agent(a Agent) (providers.Provider, error) {
	k := agentModel{model: a.Model, operator: a.Operator, keyEnv: a.KeyEnv, by: a.BaseURLBy, priceIn: -1, priceOut: -1}
	r, rated := a.rates()
	if rated {
		k.priceIn, k.priceOut = r.Input, r.Output
	}
	if p, ok := ms.byAgent.Get(k); ok {
		return p, nil
	}
	sp, err := a.Spec()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	p, err := ms.spec(sp)
	if err != nil {
		return nil, err
	}
	if rated {
		p = pricing.WithRates(p, sp.Backend, r)
	}
	ms.byAgent.Put(k, p)
	return p, nil
}

// of is the provider of a session's agent, looked up by id in its
// own frame: the step that asks parks in the model call, and must not hold
// an Agent copy on its stack (modelOf says why).
func (ms *models) of(s *Session, id string) (providers.Provider, error) {
	ag, _ := s.Agent(id)
	return ms.agent(ag)
}

// spec returns (and caches) the provider of a spec. The cache key
// holds the spec's key grant: a team file's agent, the command line's and a
// client's agent with the same spec text are different endpoints as far as
// keys go, and must never share an opened provider.
func (ms *models) spec(sp providers.Spec) (providers.Provider, error) {
	key := fmt.Sprintf("%s\x00%t\x00%s\x00%t", sp.String(), sp.Grant.Operator, sp.Grant.KeyEnv, sp.Grant.CommandLine)
	if p, ok := ms.opened.Get(key); ok {
		return p, nil // every step asks: the cache's own lock, not mu, which an Open holds
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if p, ok := ms.opened.Get(key); ok {
		return p, nil
	}
	if ms.open == nil {
		return nil, fmt.Errorf("%w: this service cannot call models", ErrBadSpec)
	}
	p, err := ms.open(sp)
	if err != nil {
		return nil, err
	}
	ms.opened.Put(key, p)
	return p, nil
}
