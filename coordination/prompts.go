package coordination

import (
	"strings"
	"sync"

	"github.com/massgen-go/massgen-mcp/providers"
)

// promptSet holds the parts of a session's prompts that never change once it
// has a step: the system prompt of each agent and the stable prefix. Every
// step sent them rebuilt (over a kilobyte each) — at 1,000 concurrent
// sessions the largest share of the orchestrator's garbage.
type promptSet struct {
	system map[string]string // agent id → system prompt
	prefix string

	// fences caches answerFence by the labels shown, in order: within a
	// session a label names one answer for good, so the same labels always
	// give the same fence, and most steps (votes) show the same answers as
	// the step before. Hashing every shown answer each step was a tenth of a
	// landing's CPU.
	mu     sync.Mutex
	fences map[string]string
}

// maxFences bounds a session's fence cache; past it the cache starts over.
const maxFences = 256

// fence returns answerFence(seed, shown), cached.
func (p *promptSet) fence(seed int64, shown []providers.ShownAnswer) string {
	var b strings.Builder
	for _, a := range shown {
		b.WriteString(a.Label)
		b.WriteByte(0)
	}
	key := b.String()
	p.mu.Lock()
	f, ok := p.fences[key]
	p.mu.Unlock()
	if ok {
		return f
	}
	f = answerFence(seed, shown)
	p.mu.Lock()
	if p.fences == nil || len(p.fences) >= maxFences {
		p.fences = map[string]string{}
	}
	p.fences[key] = f
	p.mu.Unlock()
	return f
}

// fenceFor is the fence of a view's answers, from the session's cache when
// it has one.
func fenceFor(s *Session, shown []providers.ShownAnswer) string {
	if s.prompts != nil {
		return s.prompts.fence(s.Seed, shown)
	}
	return answerFence(s.Seed, shown)
}

func newPromptSet(s *Session) *promptSet {
	p := &promptSet{system: make(map[string]string, len(s.Agents)), prefix: stablePrefix(s)}
	for _, ag := range s.Agents {
		p.system[ag.ID] = systemPrompt(s, ag)
	}
	return p
}

// promptsFor returns an agent's system prompt and the stable prefix: cached
// for a session the service keeps, else built (a session not yet stepped,
// whose setup may still change).
func promptsFor(s *Session, ag Agent) (system, prefix string) {
	if s.prompts != nil {
		return s.prompts.system[ag.ID], s.prompts.prefix
	}
	return systemPrompt(s, ag), stablePrefix(s)
}

// kept returns the setup the service keeps for s's session — the same
// setup, with its prompts cached — or s when none is kept yet. A run's loop
// already holds the kept one; a step driven through Step may have read its
// setup just before another step landed and the setup was kept.
func (ss *sessions) kept(s *Session) *Session {
	if k, ok := ss.setups.Get(s.ID); ok {
		return k
	}
	return s
}
