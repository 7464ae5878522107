package coordination

// CacheSizes counts the entries of a service's caches, for the tests that
// check what a service keeps of the sessions it has seen.
func CacheSizes(svc *Service) map[string]int {
	return map[string]int{
		"setups": svc.sessions.setups.Len(), "statuses": svc.statuses.queues.len(), "ended": svc.sweeps.seen.Len(),
		"derived": svc.sessions.derived.Len(), "opened": svc.models.opened.Len(), "byAgent": svc.models.byAgent.Len(), "shown": svc.shown.cache.Len(),
		"tidied": svc.sessions.tidied.Len(), "starts": svc.sessions.starts.len(),
	}
}
