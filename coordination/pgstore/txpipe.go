package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// readThenWrite runs a read-decide-write transaction in two round trips
// where pgx.BeginFunc takes four or more (BEGIN, each read, the writes and
// COMMIT, one each): BEGIN goes pipelined with the reads, and the writes
// with COMMIT. read takes the reads' results in the order queued (BEGIN's
// already taken); write decides the writes, and may make a rare extra
// round trip inside the transaction on conn; a nil batch writes nothing and
// commits. wrote, if set, takes the writes' results (the COMMIT's is taken
// after it). A write that fails stops the rest, the COMMIT included, and the
// transaction is rolled back, as is one that read or write refuses. It runs
// on a connection of pool (DB.pool, or DB.beats for the lease renewals).
func readThenWrite(ctx context.Context, pool *pgxpool.Pool, reads *pgx.Batch, read func(br pgx.BatchResults) error,
	write func(conn *pgxpool.Conn) (*pgx.Batch, error), wrote func(br pgx.BatchResults) error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection given back inside a transaction (a rollback that did
	// not reach the server) is closed by the pool, never reused.
	defer conn.Release()
	return readThenWriteOn(ctx, conn, reads, read, write, wrote)
}

// readThenWriteOn is readThenWrite on a connection the caller took, for a
// caller that decides what to read only once it has one (renewAll).
func readThenWriteOn(ctx context.Context, conn *pgxpool.Conn, reads *pgx.Batch, read func(br pgx.BatchResults) error,
	write func(conn *pgxpool.Conn) (*pgx.Batch, error), wrote func(br pgx.BatchResults) error) error {
	var err error
	first := &pgx.Batch{QueuedQueries: append([]*pgx.QueuedQuery{{SQL: "BEGIN"}}, reads.QueuedQueries...)}
	br := conn.SendBatch(ctx, first)
	if _, err = br.Exec(); err == nil {
		err = read(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var writes *pgx.Batch
	if err == nil {
		writes, err = write(conn)
	}
	if err != nil {
		rollback(ctx, conn)
		return err
	}
	if writes == nil {
		writes = &pgx.Batch{}
	}
	writes.Queue("COMMIT")
	br = conn.SendBatch(ctx, writes)
	if wrote != nil {
		err = wrote(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		rollback(ctx, conn)
	}
	return err
}

// rollback ends a failed transaction on conn; one that cannot leaves the
// connection inside it, and the pool then closes it.
func rollback(ctx context.Context, conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() == 'I' {
		return
	}
	_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
}
