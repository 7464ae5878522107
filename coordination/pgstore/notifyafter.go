package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// PostgreSQL serialises the commits of transactions that NOTIFY (so the
// notification queue keeps commit order): such a commit takes a
// database-wide lock and holds it until the commit is done. In a
// transaction that waits for the WAL flush, that is through the flush, so
// notifying landings waited for each other's fsync one by one and never
// shared a group commit: at 1,000 sessions their p50 was 70-79 ms, and
// 47-49 ms once split. A durable write therefore commits and then
// notifies, in a second transaction of the same pipelined round trip,
// which writes no WAL to flush and holds the lock for microseconds. The
// listeners learn of the change no earlier than before: at a commit.

// notifyOne is a change's NOTIFY ($2 its payload); notifyEach is one
// NOTIFY for each payload of $2, a group's.
const (
	notifyOne  = `SELECT pg_notify($1, $2)`
	notifyEach = `SELECT pg_notify($1, p) FROM unnest($2::text[]) p`
)

// commitThenNotify sends b (its queued queries carrying the callbacks that
// read their answers) on conn as one transaction, then, after its commit,
// the NOTIFY of c for session id. A statement that fails stops the rest:
// the transaction is rolled back and conn given back idle, and the error
// is returned. A NOTIFY that fails after the commit (the connection lost
// between the two) is sent again on another connection, best effort, as
// notifyCommitted does: what was written stands, and a view that missed
// it catches up at the session's next change.
func (s *Store) commitThenNotify(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch, id string, c coordination.Change) error {
	committed := false
	whole := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+3)}
	whole.Queue("BEGIN")
	whole.QueuedQueries = append(whole.QueuedQueries, b.QueuedQueries...)
	whole.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		// A COMMIT of a failed transaction answers ROLLBACK.
		committed = tag.String() == "COMMIT"
		return nil
	})
	whole.Queue(notifyOne, s.db.channel, s.changePayload(id, c))
	err := conn.SendBatch(ctx, whole).Close()
	if !committed {
		rollback(ctx, conn)
		if err == nil {
			// Not seen: a statement that fails stops the pipeline before
			// the COMMIT. Were it to answer ROLLBACK without an error,
			// nothing was written, and the caller must not read it landed.
			err = errors.New("the write's transaction ended without committing; nothing of it was written")
		}
		return err
	}
	if err != nil {
		s.notifyCommitted(ctx, id, c)
	}
	return nil
}
