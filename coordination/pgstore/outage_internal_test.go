package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestUnavailableTellsAnOutageFromEveryOtherError pins the classification a
// run pauses on: an unreachable or restarting database and a deadline run
// out are outages; PostgreSQL's own errors, a cancelled request and any
// other error are not.
func TestUnavailableTellsAnOutageFromEveryOtherError(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"a connection failure (class 08)", &pgconn.PgError{Code: "08006"}, true},
		{"an administrator's shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"a server starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"a write on a server a failover demoted (25006)", &pgconn.PgError{Code: "25006"}, true},
		{"a full disk (53100)", &pgconn.PgError{Code: "53100"}, true},
		{"no connection left (53300)", &pgconn.PgError{Code: "53300"}, true},
		{"a statement over temp_file_limit (53400)", &pgconn.PgError{Code: "53400"}, false},
		{"a statement out of memory (53200)", &pgconn.PgError{Code: "53200"}, false},
		{"a unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"a cancelled statement (57014)", &pgconn.PgError{Code: "57014"}, false},
		{"a row waited for past lock_timeout (55P03): a grouped write's members go again alone", &pgconn.PgError{Code: "55P03"}, false},
		{"a connection cut mid-answer", fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), true},
		{"a refused connection", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"a reset connection", syscall.ECONNRESET, true},
		{"a deadline run out", fmt.Errorf("renewing: %w", context.DeadlineExceeded), true},
		{"a cancelled request", fmt.Errorf("landing: %w", context.Canceled), false},
		{"pgx's closed connection", errors.New("conn closed"), true},
		{"anything else", errors.New("the ledger says no"), false},
	}
	for _, c := range cases {
		if got := unavailable(c.err); got != c.want {
			t.Errorf("%s (%v): unavailable = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// TestARefusedConnectionIsAnOutageToldWithoutTheDatabasesNames: a new
// connection the database refuses (here a database that does not exist,
// as after a role's password changed under a running replica) is an
// outage, so a run pauses rather than ends and a client is told its cause
// in words that name neither the role, the database nor the host; before,
// its SQLSTATE made it an ordinary error whose text reached the client.
func TestARefusedConnectionIsAnOutageToldWithoutTheDatabasesNames(t *testing.T) {
	u, err := url.Parse(pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_database_massgen"
	_, err = pgconn.Connect(context.Background(), u.String())
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "3D000" {
		t.Fatalf("connecting to a database that does not exist: %v; want 3D000", err)
	}
	if !unavailable(err) {
		t.Fatalf("a refused connection is not an outage: %v", err)
	}
	cause := (&Store{}).OutageCause(err)
	if cause != "its database does not exist" {
		t.Errorf("cause %q", cause)
	}
	for _, name := range []string{"no_such_database_massgen", u.Hostname(), u.User.Username()} {
		if name != "" && strings.Contains(cause, name) {
			t.Errorf("the cause %q names %q", cause, name)
		}
	}
}

// TestOutageCauseNamesWhatAnOperatorMustFix: the outages an operator must
// act on, or that say when they pass, are told by cause; a lost
// connection is not, and no cause names the database's host or role.
func TestOutageCauseNamesWhatAnOperatorMustFix(t *testing.T) {
	s := &Store{}
	for _, c := range []struct {
		err  error
		want string
	}{
		{&pgconn.PgError{Code: "25006"}, "takes no writes"},
		{fmt.Errorf("connecting: %w", pgconn.ErrReadOnlyConnection), "takes no writes"},
		{fmt.Errorf("appending: %w", &pgconn.PgError{Code: "53100"}), "disk is full"},
		{&pgconn.PgError{Code: "53300"}, "no connection left"},
		{&pgconn.PgError{Code: "57P01"}, "shutting down"},
		{&pgconn.PgError{Code: "57P03"}, "starting up or recovering"},
		{&pgconn.PgError{Code: "08006"}, ""},
		{&pgconn.PgError{Code: "23505"}, ""},
		{errors.New("failed to connect to `user=massgen_app database=tenants`: 10.0.0.7:5432: dial error"), ""},
	} {
		got := s.OutageCause(c.err)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("OutageCause(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
