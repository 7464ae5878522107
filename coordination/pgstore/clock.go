package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// maxClockOffset is how far a replica's clock may be from the database's.
// Replicas judge each other's run and step leases by expiries written with
// the holder's clock and read with their own (coordination.RunLease.Held),
// allowing coordination.MaxClockSkew between any two; each within half of
// it of the database's keeps every pair within it.
const maxClockOffset = coordination.MaxClockSkew / 2

// clockSamples is how many reads of the database's clock Open takes; the
// one with the shortest round trip says the most.
const clockSamples = 3

// clockOffset is how far the database's clock is ahead of now's (behind,
// negative), and the most the reading can be off by: half its round trip.
func clockOffset(ctx context.Context, pool *pgxpool.Pool, now func() time.Time) (offset, within time.Duration, err error) {
	within = -1
	for range clockSamples {
		var at time.Time
		sent := now()
		if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&at); err != nil {
			return 0, 0, fmt.Errorf("reading the database's clock: %w", err)
		}
		back := now()
		half := back.Sub(sent) / 2
		if within < 0 || half < within {
			offset, within = at.Sub(sent.Add(half)), half
		}
	}
	return offset, within, nil
}

// checkClock refuses a replica whose clock is surely more than
// maxClockOffset from the database's: its leases would read expired to the
// other replicas while it runs them (its clock behind), or a run it
// stopped holding would read running for as long as it is ahead, and
// nothing would say why.
func checkClock(ctx context.Context, pool *pgxpool.Pool, now func() time.Time) error {
	offset, within, err := clockOffset(ctx, pool, now)
	if err != nil {
		return err
	}
	if surelyOff(offset, within) {
		return fmt.Errorf("%s, and start again", clockOff(offset, within))
	}
	return nil
}

// surelyOff tells whether a clock read offset from the database's, give or
// take within, is more than maxClockOffset off it whatever the reading's
// error.
func surelyOff(offset, within time.Duration) bool {
	return offset.Abs()-within > maxClockOffset
}

// clockOff says which way and how far this machine's clock is off the
// database's, why that matters and what to sync.
func clockOff(offset, within time.Duration) string {
	way := "behind"
	if offset < 0 {
		way = "ahead of"
	}
	return fmt.Sprintf("this machine's clock is %s %s the database's (give or take %s); replicas judge each other's leases by their own clocks and allow %s between any two, so each must be within %s of the database's: sync this machine's clock, or the database server's if it is the one off (NTP, chrony or systemd-timesyncd)",
		offset.Abs().Round(time.Millisecond), way, within.Round(time.Millisecond), coordination.MaxClockSkew, maxClockOffset)
}
