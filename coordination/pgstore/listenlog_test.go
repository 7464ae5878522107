package pgstore

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestALostListenerIsLoggedOncePerOutage: a replica cut off from the
// database tries to hear other replicas again every 500 ms; the outage is
// logged as it begins and as it ends, not at each try (a replica cut off
// for 20 s logged 40 warnings).
func TestALostListenerIsLoggedOncePerOutage(t *testing.T) {
	dsn := pgtest.Schema(t)
	var refuse atomic.Bool
	var mu sync.Mutex
	var ports []int
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if refuse.Load() {
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
		}
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
				mu.Lock()
				ports = append(ports, a.Port)
				mu.Unlock()
			}
		}
		return c, err
	}
	log := &coordtest.SyncBuffer{}
	count := func(sub string) int { return strings.Count(log.String(), sub) }
	_ = replicaOn(t, dsn, Options{dial: dial, Logger: zerolog.New(log).Level(zerolog.DebugLevel)})
	other := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	refuse.Store(true)
	mu.Lock()
	mine := append([]int(nil), ports...)
	mu.Unlock()
	// Every connection of the cut replica ends, and no new one can be made.
	if _, err := other.db.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ANY($1)`, mine); err != nil {
		t.Fatal(err)
	}
	tries := func() int {
		return count("lost the PostgreSQL connection that hears") + count("still reconnecting")
	}
	for deadline := time.Now().Add(10 * time.Second); tries() < 4; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the listener did not try again three times in 10 s; its log:\n%s", log.String())
		}
	}
	if n := count("lost the PostgreSQL connection that hears"); n != 1 {
		t.Errorf("the outage was warned of %d times; want once", n)
	}
	refuse.Store(false)
	for deadline := time.Now().Add(10 * time.Second); count("hearing other replicas' changes again") < 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the listener did not say it hears again; its log:\n%s", log.String())
		}
	}
}
