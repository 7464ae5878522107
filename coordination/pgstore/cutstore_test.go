package pgstore

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// cutAtCommit opens session "s" on a replica a of a schema of its own, and
// a store of the same tenant whose connection is cut once, right after the
// first landing whose batch holds mark has committed: the landing's answer
// is lost though it landed, as when the network fails at the commit.
func cutAtCommit(t *testing.T, mark string) (a, cut *Store) {
	t.Helper()
	dsn := pgtest.Schema(t)
	a = countedReplica(t, dsn, &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	landed := func() bool { return rows(t, a, "entries") > 0 }
	armed := &atomic.Bool{}
	armed.Store(true)
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutOnce{cutAfter: &cutAfter{Conn: c, mark: []byte(mark), committed: landed}, armed: armed}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	cut = &Store{db: newDB(pool, a.db.channel, Options{}), tenant: a.tenant}
	return a, cut
}
