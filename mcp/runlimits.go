package mcp

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/semaphore"
)

// errTooManyRuns refuses a run past the server's or the tenant's cap. The
// refusal says which cap and what frees a slot, for every surface that
// takes slots here (AcquireRun: the web view and the chat endpoint too),
// each adding when to ask again: at the server's cap the teams running
// may all be other clients', so "wait for one of yours" would be wrong.
var errTooManyRuns = errors.New("too many teams running")

// runLimitError is errTooManyRuns with the cap that refused: the fix line
// differs (factFix), since only at the caller's own cap does stopping one
// of its teams free a slot for it.
type runLimitError struct {
	perTenant bool
	cap       int64
}

func (e *runLimitError) Error() string {
	if e.perTenant {
		return fmt.Sprintf("%s: you already run %s, this server's limit per client (--max-runs-per-tenant); a slot frees when one of yours ends or is cancelled, or when the server's operator raises the limit", errTooManyRuns, teams(e.cap))
	}
	return fmt.Sprintf("%s: this server already runs %s, its limit for all clients together (--max-runs); a slot frees when any of them ends, or when the server's operator raises the limit", errTooManyRuns, teams(e.cap))
}

func (e *runLimitError) Unwrap() error { return errTooManyRuns }

// runLimits caps the run loops (run_team, checkpoint) this server has going
// at once, server-wide and per tenant. A run is refused at once rather than
// queued: the caller learns the cap and can wait for one of its own runs.
type runLimits struct {
	server    *semaphore.Weighted
	max       int64
	perTenant int64

	mu       sync.Mutex
	byTenant map[string]*semaphore.Weighted
}

// newRunLimits returns the caps; zero or less means no cap.
func newRunLimits(max, perTenant int) *runLimits {
	l := &runLimits{max: int64(max), perTenant: int64(perTenant), byTenant: map[string]*semaphore.Weighted{}}
	if max > 0 {
		l.server = semaphore.NewWeighted(int64(max))
	}
	return l
}

// acquire takes a run slot for the tenant; release gives it back (once).
func (l *runLimits) acquire(tenant string) (release func(), err error) {
	var t *semaphore.Weighted
	if l.perTenant > 0 {
		l.mu.Lock()
		t = l.byTenant[tenant]
		if t == nil {
			t = semaphore.NewWeighted(l.perTenant)
			l.byTenant[tenant] = t
		}
		l.mu.Unlock()
		if !t.TryAcquire(1) {
			return nil, &runLimitError{perTenant: true, cap: l.perTenant}
		}
	}
	if l.server != nil && !l.server.TryAcquire(1) {
		if t != nil {
			t.Release(1)
		}
		return nil, &runLimitError{cap: l.max}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if l.server != nil {
				l.server.Release(1)
			}
			if t != nil {
				t.Release(1)
			}
		})
	}, nil
}

// teams counts n teams in words.
func teams(n int64) string {
	if n == 1 {
		return "1 team"
	}
	return fmt.Sprintf("%d teams", n)
}
