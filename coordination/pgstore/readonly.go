package pgstore

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A failover leaves the pool's connections on the old primary, now a
// standby or demoted, when a proxy (HAProxy, a cloud's endpoint) kept them:
// every write there fails with SQLSTATE 25006 (read-only transaction),
// which a run pauses and retries on as an outage (unavailable), and a
// retry on the same connection would fail the same way for as long as it
// lived. So a connection that answered 25006 is closed as it goes back to
// the pool (markReadOnly, dropReadOnly), and a new one is let in only once
// it is read-write (requireWritable): the retry reaches the new primary,
// or waits, an outage, until there is one.

// readOnlyKey marks, in a connection's CustomData, one that answered 25006.
const readOnlyKey = "massgen.readOnly"

// markReadOnly marks conn if err says its server takes no writes (heard
// of by the pools' tracer, answerWatch).
func markReadOnly(conn *pgx.Conn, err error) {
	if readOnly(err) {
		conn.PgConn().CustomData()[readOnlyKey] = true
	}
}

// readOnly tells an error of a server that takes no writes.
func readOnly(err error) bool {
	if err == nil {
		// The tracers ask of every answer; pe below escapes to the heap.
		return false
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25006" || errors.Is(err, pgconn.ErrReadOnlyConnection)
}

// dropReadOnly is the pool's AfterRelease: a connection marked read-only
// is closed rather than kept.
func dropReadOnly(c *pgx.Conn) bool {
	return c.PgConn().CustomData()[readOnlyKey] == nil
}

// requireWritable makes every new connection of cfg check that its server
// takes writes (libpq's target_session_attrs=read-write, one statement
// per connection made), unless the address names target_session_attrs
// itself.
func requireWritable(dsn string, cfg *pgxpool.Config) {
	if cfg.ConnConfig.ValidateConnect == nil && !strings.Contains(dsn, "target_session_attrs") {
		cfg.ConnConfig.ValidateConnect = pgconn.ValidateConnectTargetSessionAttrsReadWrite
	}
	cfg.AfterRelease = dropReadOnly
}
