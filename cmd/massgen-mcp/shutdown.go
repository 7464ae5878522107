package main

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/mcp"
)

// served is the MCP server serve runs and what it owns beside it: the
// stores and the background work on them (session timers, spend replays,
// resume polls). Its stop goes in order, since each step needs the stores
// the next one closes: the background work stops first, so no poll starts
// a run after the server has cancelled them all; the server then cancels
// its runs, which record their ends (mcp.DefaultShutdownTimeout); the
// stores close last (close), with nothing left to use them.
type served struct {
	*mcp.Server
	stores coordination.Stores

	ctx  context.Context // the background work's: ends at stopWork
	stop context.CancelFunc

	mu      sync.Mutex
	stopped bool // no background work starts after stopWork
	work    sync.WaitGroup

	// tokens is the tokens file's tenants once serve has loaded it (nil:
	// none, every tenant is the operator's to serve).
	tokens atomic.Pointer[mcp.Tokens]
}

// named tells whether tenant is still one the server serves: the default,
// or named in the tokens file as last reloaded. A tenant taken out of the
// file has its runs no longer taken up on its behalf.
func (s *served) named(tenant string) bool {
	t := s.tokens.Load()
	return t == nil || tenant == mcp.DefaultTenant || slices.Contains(t.Tenants(), tenant)
}

// workGrace bounds the wait for the background work to stop and closeGrace
// the closing of the stores. Both are normally instant; with the server's
// own mcp.DefaultShutdownTimeout they keep a SIGTERM's whole stop within
// ten seconds, docker stop's grace before SIGKILL.
const (
	workGrace  = time.Second
	closeGrace = time.Second
)

func newServed(ctx context.Context, stores coordination.Stores) *served {
	s := &served{stores: stores}
	s.ctx, s.stop = context.WithCancel(ctx)
	return s
}

// spawn runs f as background work on the stores until stopWork; once that
// has begun, f is not started.
func (s *served) spawn(f func(ctx context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.work.Go(func() { f(s.ctx) })
}

// stopWork ends the background work and waits for it, at most workGrace:
// every piece of it stops as its context ends, between two queries.
func (s *served) stopWork() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.stop()
	if !within(workGrace, s.work.Wait) {
		logger.Warn().Dur("waited", workGrace).Msg("the server's background work (timers, resume polls) had not stopped; stopping without it")
	}
}

// serving is the context to serve until: it ends once ctx has ended and
// the background work has stopped, so that the server's stop finds every
// run a resume poll started.
func (s *served) serving(ctx context.Context) context.Context {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(ctx, func() {
		s.stopWork()
		cancel()
	})
	return sctx
}

// close stops the background work, if the serve context has not, and
// closes the stores. Call it once the server has returned: its runs have
// recorded their ends, or been left by its shutdown's bound.
func (s *served) close() {
	s.stopWork()
	closeStores(s.stores)
}

// closeStores closes stores that hold a connection (PostgreSQL's), waiting
// at most closeGrace: a connection a run left by the shutdown still holds
// would keep the pool's Close waiting for it, and the process exits anyway.
func closeStores(stores coordination.Stores) {
	c, ok := stores.(interface{ Close() })
	if !ok {
		return
	}
	if !within(closeGrace, c.Close) {
		logger.Warn().Dur("waited", closeGrace).Msg("the database had not closed; exiting without waiting for it (its leases and locks expire)")
	}
}

// within runs f and waits for it at most limit, reporting whether it
// returned; f goes on after a limit that ran out.
func within(limit time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
