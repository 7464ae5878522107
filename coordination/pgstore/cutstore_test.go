package pgstore

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

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
	landed := func() bool { return rows(t, a, "entries") > 0 }
	armed := &atomic.Bool{}
	armed.Store(true)
	cut = besideOn(t, dsn, a, func(c net.Conn) net.Conn {
		return &cutOnce{cutAfter: &cutAfter{Conn: c, mark: []byte(mark), committed: landed}, armed: armed}
	})
	return a, cut
}
