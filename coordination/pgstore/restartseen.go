package pgstore

import (
	"context"
	"fmt"
	"time"
)

// restartDown is how long before the database's start the outage that
// restarted it is taken to have begun. Nothing a replica can read says how
// long the database was down; a minute covers a restart or a crash's
// recovery, and a longer outage's early expiries are left to the expiry
// alone. The excuse counts silentFor more (outageSeen.span).
const restartDown = time.Minute

// seeRestart marks the database's last restart (pg_postmaster_start_time)
// as an outage that ended when it started. A replica running through the
// restart saw it (its LISTEN connection was cut: watch.go); one opened
// after it did not, and read every run whose lease ran out while the
// database was down as interrupted, and under --resume-interrupted took it
// over from its live holder as soon as it started. A restart long past
// excuses nothing: the excuse lasts a TTL from the start.
func (db *DB) seeRestart(ctx context.Context) error {
	var started time.Time
	if err := db.pool.QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&started); err != nil {
		return fmt.Errorf("reading when the database started: %w", err)
	}
	db.outage.spanned(started.Add(-restartDown), started)
	return nil
}
