package pgstore

import (
	"context"
	"errors"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A measure of the session's size that fails (a statement_timeout over a
// large session, a damaged value) costs the prune its figure, not its
// delete: the size is measured under a savepoint, and the session goes.
func TestASizeThatCannotBeMeasuredStillDeletesTheSession(t *testing.T) {
	a, _ := replicasSharing(t, "s")
	ctx := context.Background()
	measure := sessionSize
	sessionSize = `SELECT (1 / (SELECT count(*) - count(*) FROM sessions WHERE tenant = $1 AND id = $2))::bigint` // division by zero
	defer func() { sessionSize = measure }()
	size, err := a.DeleteSessionSized(ctx, "s")
	if err != nil || size != 0 {
		t.Fatalf("deleting a session whose size cannot be measured: %d, %v; want it deleted, 0 B", size, err)
	}
	if _, err := a.Session(ctx, "s"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("the session after its delete: %v, want not found", err)
	}
}
