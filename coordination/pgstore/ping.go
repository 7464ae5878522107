package pgstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

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

// Ping says whether the database answers now, takes writes, and has a
// schema this binary knows (coordination.Pinger): two round trips on the heartbeat's pool, which a
// replica's busy steps never fill, so a busy replica is not reported down.
// Answers are shared for pingFresh.
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
	p.last = s.db.beats.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
		if err := writable(ctx, c); err != nil {
			return err
		}
		return schemaNotAhead(ctx, c)
	})
	p.at = time.Now()
	return p.last
}

// writable asks c's server whether it takes writes. A connection left on
// a failover's old primary, kept alive read-only by a proxy, answers a
// plain ping as if nothing had happened while every write of the replica
// fails there; it is said to take no writes, so a load balancer's health
// check takes the replica out meanwhile, and closed as it goes back to the
// pool (markReadOnly), so the next check is made on a new connection,
// checked read-write as it is made (requireWritable).
func writable(ctx context.Context, c *pgxpool.Conn) error {
	conn := c.Conn()
	err := pgconn.ValidateConnectTargetSessionAttrsReadWrite(ctx, conn.PgConn())
	markReadOnly(conn, err)
	if readOnly(err) {
		return fmt.Errorf("the database takes no writes (a read-only server, such as a failover's old primary): %w", err)
	}
	return err
}
