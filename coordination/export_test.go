package coordination

// CacheSizes counts the entries of a service's caches, for the tests that
// check what a service keeps of the sessions it has seen.
func CacheSizes(svc *Service) map[string]int {
	return map[string]int{
		"setups": svc.setups.Len(), "statuses": svc.statuses.len(), "ended": svc.ended.Len(),
		"derived": svc.derived.Len(), "opened": svc.models.opened.Len(), "shown": svc.shown.Len(),
		"tidied": svc.tidied.Len(), "starts": svc.starts.len(),
	}
}
