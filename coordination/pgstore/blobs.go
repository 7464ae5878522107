package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Blobs are content-addressed (SHA-256, hex) and deduplicated per tenant:
// a workspace snapshot's files, so that any replica can materialise them.
// They are written and read in chunks of blobChunk, so a large file is
// streamed, never held whole, and capped at the store's size limit.

// blobChunk is the size of one stored chunk: large enough that a megabyte
// is a handful of rows, small enough to stay out of TOAST's way.
const blobChunk = 256 << 10

// DefaultBlobLimit caps one blob (a single file of a snapshot).
const DefaultBlobLimit = 64 << 20

// ErrBlobTooLarge is returned by PutBlob for content over the limit.
var ErrBlobTooLarge = errors.New("the content is larger than the store's blob limit")

// ErrBlobNotFound is returned by OpenBlob for a hash not stored.
var ErrBlobNotFound = errors.New("no blob with that SHA-256 is stored")

// touchEvery is how stale a blob's touched_at must be for a reuse to write
// it again: a file reused by every step of a busy team is one write an
// hour, not one a step. A collection's grace is never shorter than twice
// this (CollectGarbage), so a reuse's skipped touch is never what lets a
// blob in use go.
const touchEvery = time.Hour

// blobInsert records a blob whose chunks are written, or touches the one
// stored before (unless touched within $4 ms). It returns whether the row is
// new, and no row when it was stored and touched lately.
const blobInsert = `INSERT INTO blobs (tenant, sha256, size) VALUES ($1, $2, $3)
	ON CONFLICT (tenant, sha256) DO UPDATE SET touched_at = now()
		WHERE blobs.touched_at < now() - $4 * interval '1 millisecond'
	RETURNING xmax = 0`

// blobsTouch tells which of the blobs $2 are stored, touching each (as
// blobInsert does) that was not touched within $3 ms. Its commit does not
// wait for the WAL flush: a touch lost to a database crash matters only to
// a snapshot whose manifest that crash kept from landing. A row touched
// within $3 is present as the statement's snapshot shows it: no collection
// deletes it (their grace is at least twice that, CollectGarbage), and
// reading it writes nothing. An older row is present only if the touch
// changed it: its lock waits for a collection deleting the row meanwhile
// (blobCollect) and then finds it gone, where the snapshot would have shown
// it, and the manifest named a blob that was gone. The rows are locked in
// one order (sha256), so two snapshots touching shared blobs at once never
// deadlock on each other. A row another statement touched meanwhile reads
// as not stored (the statement's snapshot shows its old touch, the lock its
// new one): its content is stored again, a write spared no more.
const blobsTouch = `WITH touchcfg AS (SELECT set_config('synchronous_commit', 'off', true)),
	old AS (SELECT b.sha256 FROM blobs b, touchcfg
		WHERE b.tenant = $1 AND b.sha256 = ANY($2) AND b.touched_at < now() - $3 * interval '1 millisecond'
		ORDER BY b.sha256 FOR UPDATE OF b),
	touched AS (UPDATE blobs b SET touched_at = now() FROM old
		WHERE b.tenant = $1 AND b.sha256 = old.sha256 RETURNING b.sha256)
	SELECT sha256 FROM blobs WHERE tenant = $1 AND sha256 = ANY($2) AND touched_at >= now() - $3 * interval '1 millisecond'
	UNION SELECT sha256 FROM touched`

// PutBlob stores r's content, at most limit bytes (DefaultBlobLimit when
// limit <= 0), and returns its SHA-256 and size. Content stored before is
// kept once: the new copy's chunks are dropped in the same transaction.
func (s *Store) PutBlob(ctx context.Context, r io.Reader, limit int64) (sum string, n int64, err error) {
	if limit <= 0 {
		limit = DefaultBlobLimit
	}
	upload := "upload:" + newToken()
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		h := sha256.New()
		buf := make([]byte, blobChunk)
		for i := 0; ; i++ {
			k, rerr := io.ReadFull(r, buf)
			if k > 0 {
				n += int64(k)
				if n > limit {
					return fmt.Errorf("%w (%d bytes)", ErrBlobTooLarge, limit)
				}
				h.Write(buf[:k])
				if _, err := tx.Exec(ctx, `INSERT INTO blob_chunks (tenant, blob, n, data) VALUES ($1, $2, $3, $4)`,
					s.tenant, upload, i, buf[:k]); err != nil {
					return err
				}
			}
			if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
				break
			}
			if rerr != nil {
				return fmt.Errorf("reading the content: %w", rerr)
			}
		}
		sum = hex.EncodeToString(h.Sum(nil))
		// Content stored before is touched (blobsTouch), so a prune's
		// collection, which takes only blobs untouched for its grace,
		// leaves it to the snapshot or image about to name it.
		var inserted bool
		err := tx.QueryRow(ctx, blobInsert, s.tenant, sum, n, touchEvery.Milliseconds()).Scan(&inserted)
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil // stored and touched lately: nothing to write
		}
		if err != nil {
			return err
		}
		if !inserted {
			_, err = tx.Exec(ctx, `DELETE FROM blob_chunks WHERE tenant = $1 AND blob = $2`, s.tenant, upload)
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE blob_chunks SET blob = $3 WHERE tenant = $1 AND blob = $2`, s.tenant, upload, sum)
		return err
	})
	if err != nil {
		return "", 0, fmt.Errorf("storing a blob: %w", err)
	}
	return sum, n, nil
}

// OpenBlob streams the blob with the given SHA-256, one chunk at a time.
func (s *Store) OpenBlob(ctx context.Context, sum string) (io.ReadCloser, int64, error) {
	var size int64
	err := s.db.pool.QueryRow(ctx, `SELECT size FROM blobs WHERE tenant = $1 AND sha256 = $2`, s.tenant, sum).Scan(&size)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, fmt.Errorf("blob %s: %w", sum, ErrBlobNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading blob %s: %w", sum, err)
	}
	return &blobReader{ctx: ctx, s: s, sum: sum, size: size}, size, nil
}

// blobReader reads a blob's chunks in order, fetching each when the last
// is used up, into one buffer it keeps: the driver's bytes are copied out
// (pgtype.DriverBytes) rather than allocated anew per chunk, so reading a
// blob of any size costs a chunk of memory.
type blobReader struct {
	ctx  context.Context
	s    *Store
	sum  string
	size int64 // the blob's, as recorded
	read int64 // bytes handed out so far
	next int
	buf  []byte // the unread part of chunk
	kept []byte // the chunk's buffer, reused
	done bool
}

func (b *blobReader) Read(p []byte) (int, error) {
	for len(b.buf) == 0 {
		if b.done {
			return 0, io.EOF
		}
		found, err := b.fetch()
		if err != nil {
			return 0, fmt.Errorf("reading chunk %d of blob %s: %w", b.next, b.sum, err)
		}
		if !found {
			if b.read != b.size {
				// A chunk is missing (the chunks and their blob are
				// written in one transaction, so only damage does this):
				// a short read, not an end that passes for the content.
				return 0, fmt.Errorf("blob %s ends after %d of its %d bytes (chunk %d is missing): %w", b.sum, b.read, b.size, b.next, io.ErrUnexpectedEOF)
			}
			b.done = true
			continue
		}
		if b.read+int64(len(b.buf)) > b.size {
			return 0, fmt.Errorf("blob %s holds more than its %d bytes (chunk %d): it is stored damaged", b.sum, b.size, b.next)
		}
		b.next++
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	b.read += int64(n)
	return n, nil
}

// fetch reads the next chunk into kept; found is false past the last.
func (b *blobReader) fetch() (found bool, err error) {
	rows, err := b.s.db.pool.Query(b.ctx, `SELECT data FROM blob_chunks WHERE tenant = $1 AND blob = $2 AND n = $3`,
		b.s.tenant, b.sum, b.next)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if rows.Next() {
		var data pgtype.DriverBytes // valid until the next row: copied out now
		if err := rows.Scan(&data); err != nil {
			return false, err
		}
		b.kept = append(b.kept[:0], data...)
		b.buf, found = b.kept, true
	}
	return found, rows.Err()
}

func (b *blobReader) Close() error { b.done, b.buf, b.kept = true, nil, nil; return nil }
