package coordination

// observers are the functions told of every entry a step lands (metrics).
type observers struct{ fns []func(Entry) }

// Observe adds fn to the functions told of every entry a step lands, after
// it is in the ledger. fn runs on the step's goroutine, so it must be quick
// (a counter); it must not call back into the service.
func (svc *Service) Observe(fn func(Entry)) {
	for {
		old := svc.watchers.Load()
		next := &observers{}
		if old != nil {
			next.fns = append(next.fns, old.fns...)
		}
		next.fns = append(next.fns, fn)
		if svc.watchers.CompareAndSwap(old, next) {
			return
		}
	}
}

// observe tells every observer of a landed entry.
func (svc *Service) observe(e Entry) {
	if o := svc.watchers.Load(); o != nil {
		for _, fn := range o.fns {
			fn(e)
		}
	}
}

// RunsActive is the number of run loops running in this process.
func (svc *Service) RunsActive() int {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	return len(svc.runs)
}
