package pgstore

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A permission decision, or an expiry of asks, whose answer was lost is
// looked for by the replica that wrote it (unheard.go): nobody retries it
// or reads it back here, so no read of a caller's would find it.

// doubtLook is how often the permission records in doubt are looked for,
// doubtLookFor how long each is: a write whose connection was lost
// commits, if ever, once its statement has run on the server, which a
// lock may hold up for a while; one that a look begun doubtLookFor after
// it was put in doubt does not find never reached it, or was rolled back,
// and is dropped. The minute counts looks that read the log: an outage
// longer than it (the one that lost the answer, often) would drop a change
// that committed just before it, unread.
//
// doubtLastLook bounds the last look, made as the store closes: a process
// that exits just after an answer was lost (the CLI's approve or status,
// whose read of the pending asks expires the lapsed ones) would otherwise
// end the look before its first tick and tell nobody of a change that
// committed. It holds Close up only while a change is in doubt.
const (
	doubtLook     = 200 * time.Millisecond
	doubtLookFor  = time.Minute
	doubtLastLook = time.Second
)

// inDoubt keeps a permission change of session id whose write failed with
// err in doubt when err leaves its outcome unknown (the statement was
// sent and its answer lost with the connection), to be told to the other
// replicas once its records are found. A server's refusal, or a statement
// never sent, wrote nothing.
func (s *Store) inDoubt(id string, err error, records []doubtedRecord) {
	if unavailable(err) && !pgconn.SafeToRetry(err) && len(records) > 0 {
		s.db.doubt(doubted{tenant: s.tenant, id: id, records: records})
	}
}

// lookForUnheard looks for the permission records in doubt every
// doubtLook, tells the other replicas of each change found, and ends once
// none is left to look for, or at Close, after a last look. A look that
// fails (the outage goes on) is made again at the next tick.
func (db *DB) lookForUnheard() {
	defer db.unheard.looker.Done()
	tick := time.NewTicker(doubtLook)
	defer tick.Stop()
	// read is when the last look that read the log began (at first, this
	// one's start): changes in doubt since before it by doubtLookFor are
	// dropped.
	read := time.Now()
	for {
		select {
		case <-db.ctx.Done():
			db.lastLook(read)
			return
		case <-tick.C:
		}
		looked := db.unheard.lookFor(read)
		if len(looked) == 0 {
			return
		}
		began := time.Now()
		ctx, cancel := context.WithTimeout(db.ctx, 5*time.Second)
		err := db.tellFound(ctx, looked)
		cancel()
		if err != nil {
			db.log.Debug().Err(err).Msg("could not look for permission changes in doubt; looking again")
			continue
		}
		read = began
	}
}

// lastLook looks once more, within doubtLastLook, for the changes in doubt
// as the store closes (the DB's context ended, its pool still open), and
// drops them all; read is as lookFor's.
func (db *DB) lastLook(read time.Time) {
	defer db.unheard.lookFor(time.Time{})
	looked := db.unheard.lookFor(read)
	if len(looked) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), doubtLastLook)
	defer cancel()
	if err := db.tellFound(ctx, looked); err != nil {
		db.log.Debug().Err(err).Msg("could not look for permission changes in doubt as the store closed; the other replicas hear of them at their sessions' next change")
	}
}

// tellFound tells the other replicas of the changes of looked that the
// permission log holds, no longer in doubt.
func (db *DB) tellFound(ctx context.Context, looked []doubted) error {
	seqs, err := db.findRecords(ctx, looked)
	if err != nil {
		return err
	}
	for _, d := range db.unheard.drop(seqs) {
		(&Store{db: db, tenant: d.tenant}).notifyCommitted(ctx, d.id, d.change())
	}
	return nil
}

// findRecords reads which of looked have a record in the permission log:
// those committed.
func (db *DB) findRecords(ctx context.Context, looked []doubted) ([]uint64, error) {
	var (
		seqs         []int64
		tenants, ids []string
		ats          []time.Time
		texts        []string
	)
	for _, d := range looked {
		for _, r := range d.records {
			seqs, tenants, ids, ats, texts = append(seqs, int64(d.seq)), append(tenants, d.tenant), append(ids, d.id), append(ats, r.at), append(texts, r.text)
		}
	}
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT d.seq FROM unnest($1::bigint[], $2::text[], $3::text[], $4::timestamptz[], $5::text[]) AS d(seq, tenant, session_id, at, record)
		WHERE EXISTS (SELECT 1 FROM permission_log p
			WHERE p.tenant = d.tenant AND p.session_id = d.session_id AND p.at = d.at AND p.record::text = d.record)`,
		seqs, tenants, ids, ats, texts)
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(found))
	for i, n := range found {
		out[i] = uint64(n)
	}
	return out, nil
}

// lookFor is the changes in doubt with records to look for after a look
// begun at read found none of theirs, those put in doubt more than
// doubtLookFor before read dropped. With none (or at the zero time,
// Close), the look ends: the next one put in doubt starts another.
func (u *unheard) lookFor(read time.Time) []doubted {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.es = slices.DeleteFunc(u.es, func(d doubted) bool {
		return d.records != nil && (read.IsZero() || read.Sub(d.since) > doubtLookFor)
	})
	u.n.Store(int32(len(u.es)))
	var looked []doubted
	for _, d := range u.es {
		if d.records != nil {
			looked = append(looked, d)
		}
	}
	if len(looked) == 0 {
		u.looking = false
	}
	return looked
}

// drop drops the changes in doubt numbered seqs, found committed, and
// returns them.
func (u *unheard) drop(seqs []uint64) []doubted {
	u.mu.Lock()
	defer u.mu.Unlock()
	var dropped []doubted
	u.es = slices.DeleteFunc(u.es, func(d doubted) bool {
		if slices.Contains(seqs, d.seq) {
			dropped = append(dropped, d)
			return true
		}
		return false
	})
	u.n.Store(int32(len(u.es)))
	return dropped
}

// close ends the looks: none is started after it, and it waits for the
// one under way, which ends with the DB's context after a last look.
func (u *unheard) close() {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.looker.Wait()
}
