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
// as an outage. A replica running through the restart saw it (its LISTEN
// connection was cut: watch.go); one opened after it did not, and read
// every run whose lease ran out while the database was down as
// interrupted, and under --resume-interrupted took it over from its live
// holder as soon as it started. The outage ended when the database began
// to answer, which nothing says either: its start, plus a crash's
// recovery or a standby's catching up, any time before now. So for a
// start within restartDown of now it ends now, when this replica heard
// the database first, as for an outage it saw. A restart long past
// excuses nothing: the excuse lasts a TTL from its end.
func (db *DB) seeRestart(ctx context.Context) error {
	var started time.Time
	if err := db.pool.QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&started); err != nil {
		return fmt.Errorf("reading when the database started: %w", err)
	}
	back := started
	if now := time.Now(); now.Sub(started) < restartDown {
		back = now
	}
	db.outage.spanned(started.Add(-restartDown), back)
	return nil
}
