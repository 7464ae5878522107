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

// restartUp is how long after its start the database is taken to have
// begun answering: a crash's recovery (replaying its WAL) or a standby's
// catching up may take that long before any replica can reach it, and a
// holder renews only once it can. Nothing says when it began to answer
// either; more would delay every takeover for longer after a restart.
const restartUp = 10 * time.Second

// seeRestart marks the database's last restart (pg_postmaster_start_time)
// as an outage. A replica running through the restart saw it (its LISTEN
// connection was cut: watch.go); one opened after it did not, and read
// every run whose lease ran out while the database was down as
// interrupted, and under --resume-interrupted took it over from its live
// holder as soon as it started. The outage is taken to have ended
// restartUp after the start, or now if that is sooner. A restart long
// past excuses nothing: the excuse lasts a TTL from its end.
func (db *DB) seeRestart(ctx context.Context) error {
	var started time.Time
	if err := db.pool.QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&started); err != nil {
		return fmt.Errorf("reading when the database started: %w", err)
	}
	db.outage.restarted(started.Add(-restartDown), minTime(time.Now(), started.Add(restartUp)))
	return nil
}
