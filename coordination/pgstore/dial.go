package pgstore

import (
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A database that goes silent without closing its connections (a failover
// to another address, a NAT or firewall that drops the flow, a host that
// lost power) would leave a statement waiting on its socket until the
// kernel gives up retransmitting, some fifteen minutes: a landing would
// hold its session's lock in this process that long, and the outage's
// pause and retry (outage.go) would never begin. So the pool's TCP
// connections give up on a write the database has not acknowledged within
// silentFor (TCP_USER_TIMEOUT, Linux), and probe an idle connection (a
// statement waiting for its answer) every deadPeerProbe, giving up after
// deadPeerProbes unanswered probes. Either way the statement fails as the
// connection lost (unavailable), which the run pauses on.
const (
	silentFor      = 2 * lockTTL
	deadPeerProbe  = 5 * time.Second
	deadPeerProbes = 3
)

// deadPeerDial dials the pool's connections with those settings; a Unix
// socket (a database on this host) has no peer to lose and gets none.
func deadPeerDial() pgconn.DialFunc {
	d := &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: deadPeerProbe, Interval: deadPeerProbe, Count: deadPeerProbes},
		Control:         userTimeout(silentFor),
	}
	return d.DialContext
}
