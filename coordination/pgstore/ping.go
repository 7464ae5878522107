package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.Pinger = (*Store)(nil)

// pingFresh is how long a ping's answer stands: a load balancer's health
// checks every few seconds, from every balancer, cost one round trip a
// second at most.
const pingFresh = time.Second

// pingTimeout bounds a ping: a database that takes longer is not one a
// replica can serve from.
const pingTimeout = 2 * time.Second

// pinger remembers the last ping's answer.
type pinger struct {
	mu   sync.Mutex
	at   time.Time
	last error
}

// Ping says whether the database answers now (coordination.Pinger): a
// round trip on the heartbeat's pool, which a replica's busy steps never
// fill, so a busy replica is not reported down. Answers are shared for
// pingFresh.
func (s *Store) Ping(ctx context.Context) error {
	p := &s.db.pings
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.at) < pingFresh {
		return p.last
	}
	// Not the asker's context: a probe that hangs up mid-ping must not
	// leave "context canceled" standing as the answer for the others.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pingTimeout)
	defer cancel()
	p.last = s.db.beats.Ping(ctx)
	p.at = time.Now()
	return p.last
}
