package pgstore

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAFrozenReplicasTransactionIsEndedByTheDatabase: the store's sessions
// carry an idle-in-transaction timeout, so a replica frozen between two
// statements of a transaction does not hold its row locks for hours; a
// DSN that sets its own (as a parameter, or in options) keeps it.
func TestAFrozenReplicasTransactionIsEndedByTheDatabase(t *testing.T) {
	dsn := pgtest.Schema(t)
	for _, tc := range []struct{ dsn, want string }{
		{dsn, idleInTransaction},
		{withParam(dsn, "idle_in_transaction_session_timeout", "5min"), "5min"},
		{withParam(dsn, "options", "-c%20idle_in_transaction_session_timeout%3D7min"), "7min"},
	} {
		a := replicaOn(t, tc.dsn, Options{})
		var got string
		if err := a.db.pool.QueryRow(context.Background(), `SHOW idle_in_transaction_session_timeout`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("idle_in_transaction_session_timeout = %s, want %s", got, tc.want)
		}
	}
}

// withParam adds a run-time parameter to a postgres:// DSN.
func withParam(dsn, name, value string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + name + "=" + value
}
