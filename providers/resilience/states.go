package resilience

// States counts the breakers made so far by backend and state ("closed",
// "open", "half-open"), for metrics. Counts, not names: a breaker's key holds
// a tenant and a base URL, which one tenant's metrics must not show another.
func (b *Breakers) States() map[string]map[string]int {
	b.mu.Lock()
	all := make(map[Key]*breaker, len(b.byKey))
	for k, br := range b.byKey {
		all[k] = br
	}
	b.mu.Unlock()
	out := map[string]map[string]int{}
	for k, br := range all {
		if out[k.Backend] == nil {
			out[k.Backend] = map[string]int{}
		}
		out[k.Backend][br.cb.State().String()]++
	}
	return out
}
