package pgstore

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.OutageStore = (*Store)(nil)

// Unavailable tells a database that could not be reached from every other
// error (coordination.OutageStore), so a run pauses and retries instead of
// ending: a refused or timed-out connection, a connection cut mid-query, a
// server shutting down, starting up or in recovery, one that takes no
// writes (a failover's old primary), one out of disk or connections. A
// query PostgreSQL answered with an error of its own (a constraint, a
// syntax error) is not one, nor is a context cancelled while its statement ran. A deadline that
// ran out is one (context.DeadlineExceeded is a net.Error, and pgx reports
// it as a timeout): a statement on its own clock, as unlock's, met a
// database too slow or silent to answer. A statement never sent because
// its context had ended is one on a connection already held (pgx's
// safe-to-retry timeout), but not on a pooled call, where a cancelled
// context comes back bare, as context.Canceled, before any connection is
// taken (TestAStatementNeverSentIsAnOutageOnlyWhenPgxSaysSo): a caller
// for whom an ended context means stop checks ctx.Err() first, as a run's
// paths do, and does not lean on either answer.
//
// An error it tells is one marks an outage seen (outageSeen), which
// excuses the leases that run out in it.
func (s *Store) Unavailable(err error) bool {
	if !unavailable(err) {
		return false
	}
	s.db.outage.lostAt(time.Now())
	return true
}

func unavailable(err error) bool {
	if err == nil {
		return false
	}
	// A new connection the database refused is an outage whatever its
	// SQLSTATE (a role or password changed under a running replica, the
	// database dropped or its CONNECT revoked): the run pauses until an
	// operator mends it, and the driver's text, which names the role, the
	// database and the host, stays in the log (coordination.ShownError).
	// Checked first: the refusal is a PgError too.
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01..57P03: admin or crash
		// shutdown, cannot connect now (starting up, in recovery); 25006:
		// a read-only transaction, a write reaching a server demoted by a
		// failover (readonly.go); 53100 and 53300: a full disk, no
		// connection left, which pass when an operator frees them (not
		// the rest of class 53: a statement over temp_file_limit or out
		// of memory fails the same way every time). A run pauses on each
		// rather than ending, its model's spend unrecorded.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" ||
			pe.Code == "25006" || pe.Code == "53100" || pe.Code == "53300"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	// pgx reports a connection it closed after a failure as "conn closed",
	// and a statement it never sent as safe to retry.
	return pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}

var _ coordination.OutageCauser = (*Store)(nil)

// OutageCause says why err, an outage, happened, in words any client may
// read (coordination.OutageCauser): the SQLSTATEs an operator must act on,
// or that say when it will pass. A lost or refused connection, a timeout,
// says nothing the word "unreachable" does not.
func (s *Store) OutageCause(err error) string {
	if readOnly(err) {
		return "its database takes no writes: a read-only server, such as a failover's old primary"
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return ""
	}
	switch pe.Code {
	case "28P01", "28000":
		return "its database refuses the server's login (its role or password)"
	case "3D000":
		return "its database does not exist"
	case "42501":
		return "its database refuses the server's role the right to connect"
	case "53100":
		return "its database's disk is full"
	case "53300":
		return "its database has no connection left"
	case "57P01", "57P02":
		return "its database is shutting down"
	case "57P03":
		return "its database is starting up or recovering"
	}
	return ""
}
