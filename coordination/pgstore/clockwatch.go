package pgstore

import (
	"context"
	"time"
)

// clockCheckEvery is how often a serving replica reads the database's
// clock again after Open's check (a var: the tests' way to wait less).
var clockCheckEvery = time.Minute

// watchClock checks a serving replica's clock against the database's every
// clockCheckEvery until Close. Open refuses a clock off at the start, but
// one can drift off later (NTP stopped, a VM resumed, the date set by
// hand), with the same effect on the leases: a running replica cannot be
// refused, so it is warned, once each time its clock goes off, and told
// when the clock is back within. A reading command (existing) runs too
// briefly to drift, and is not watched.
func (db *DB) watchClock(now func() time.Time, existing bool) {
	if existing {
		return
	}
	every := clockCheckEvery
	db.done.Add(1)
	go func() {
		defer db.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		off := false
		for {
			select {
			case <-db.ctx.Done():
				return
			case <-t.C:
			}
			off = db.recheckClock(now, off)
		}
	}()
}

// recheckClock reads the database's clock once more and says whether this
// replica's is now off, warning as it goes off and telling as it comes back.
// Back means surely within maxClockOffset, not merely no longer surely off,
// so a reading made vague by a slow round trip does not end an episode.
func (db *DB) recheckClock(now func() time.Time, off bool) bool {
	ctx, cancel := context.WithTimeout(db.ctx, 10*time.Second)
	defer cancel()
	offset, within, err := clockOffset(ctx, db.pool, now)
	if err != nil {
		// The database unreachable is the outage's to report; the clock
		// is read again at the next tick.
		return off
	}
	switch {
	case !off && surelyOff(offset, within):
		meanwhile := "the other replicas may read this one's live runs as interrupted and take them over"
		if offset < 0 {
			meanwhile = "a run this replica stops holding reads running that much longer, and its failover waits that much longer"
		}
		db.log.Warn().Msg(clockOff(offset, within) + "; until then " + meanwhile)
		return true
	case off && offset.Abs()+within <= maxClockOffset:
		db.log.Info().Msgf("this machine's clock is back within %s of the database's (%s off, give or take %s)",
			maxClockOffset, offset.Abs().Round(time.Millisecond), within.Round(time.Millisecond))
		return false
	}
	return off
}
