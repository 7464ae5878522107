package pgstore

import (
	"context"
	"net"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestThePoolsConnectionsGiveUpOnASilentDatabase: a connection of the
// store's pool gives up on a write the database leaves unacknowledged
// (TCP_USER_TIMEOUT) and probes an idle wait (keepalive), so a database
// gone silent fails a statement as an outage within tens of seconds
// rather than the kernel's fifteen minutes.
func TestThePoolsConnectionsGiveUpOnASilentDatabase(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	c, err := a.db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	sc, ok := c.Conn().PgConn().Conn().(*net.TCPConn)
	if !ok {
		// A Unix socket has no peer to lose; TLS hides the socket.
		t.Skipf("the test database's connection is a %T, not plain TCP (MASSGEN_TEST_POSTGRES)", c.Conn().PgConn().Conn())
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var timeout, keepalive, idle, interval, count int
	var errs []error
	if err := raw.Control(func(fd uintptr) {
		get := func(level, opt int) int {
			v, err := unix.GetsockoptInt(int(fd), level, opt)
			errs = append(errs, err)
			return v
		}
		timeout = get(unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
		keepalive = get(unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		idle = get(unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
		interval = get(unix.IPPROTO_TCP, unix.TCP_KEEPINTVL)
		count = get(unix.IPPROTO_TCP, unix.TCP_KEEPCNT)
	}); err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if timeout != int(silentFor.Milliseconds()) {
		t.Errorf("TCP_USER_TIMEOUT = %d ms, want %d", timeout, silentFor.Milliseconds())
	}
	if keepalive == 0 || idle != int(deadPeerProbe.Seconds()) || interval != int(deadPeerProbe.Seconds()) || count != deadPeerProbes {
		t.Errorf("keepalive %d, idle %d s, interval %d s, probes %d; want on, %v, %v, %d", keepalive, idle, interval, count, deadPeerProbe, deadPeerProbe, deadPeerProbes)
	}
}
