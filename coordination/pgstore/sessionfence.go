package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The session lock guards a session's decisions: the settle that records
// one, a cancel, a host's landing counted against the cancels. Its row can
// change hands under a live holder, who is not told: a database crash
// empties the unlogged locks table and another replica takes the row
// before this one's heartbeat puts it back, or a heartbeat starved past
// lockTTL lets it expire. Two holders could then both record a decision,
// or a host's step land beside a cancel the other recorded. So the writes
// the lock guards hold its row in their own transaction
// (massgen_hold_lock, as a landing holds its step lock's): a holder whose
// row is another's writes nothing, and its caller, told the store is
// unavailable (it was, or was too slow to answer), takes the lock again
// and reads what the other holder did.

// sessionFence holds the session lock's row for the transaction, taking it
// back if the database lost it; SQLSTATE MGL01 when another holder has it.
const sessionFence = `SELECT massgen_hold_lock($1, $2, 'session', $3, $4)`

// fenceFailed is a write's error where sessionFence failed: refused
// (another holder has the row) as an outage, so the caller takes the lock
// again; any other failure as it is. The refusal does not wrap the
// database's error: a landing tells its own step lock's loss by that code.
func fenceFailed(id string, err error) error {
	if !isCode(err, lockLostCode) {
		return err
	}
	return fmt.Errorf("the session lock of %q passed to another holder while this one held it (its row expired, or the database lost it and another replica took it); nothing was written, and the write is tried again under the lock: %w (%v)", id, coordination.ErrStoreUnavailable, err)
}

// isCode tells an error PostgreSQL raised with SQLSTATE code.
func isCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// unfenced undoes what a fence may have taken back for a holder that let
// the lock go while its write ran (a write made beside another caller of
// this process holding the lock): the fence put the row back under a token
// nobody renews, which would keep the session locked until it expired.
// The delete runs only after the write committed, and whichever of it and
// the unlock's comes second leaves no row.
func (s *Store) unfenced(id, token string) {
	if token == "" || s.db.held.sessionToken(s.tenant, id) == token {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, lockDelete, s.tenant, id, "session", token); err != nil {
		s.db.held.letGo(s.tenant, token)
	}
}
