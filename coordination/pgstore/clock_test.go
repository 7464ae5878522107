package pgstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// A replica whose clock is seconds off the database's is refused at
// Open, saying which way, by how much and what to do: its leases would
// read expired to the others while it runs them, or a run it stopped would
// read running for as long as its clock is ahead. A reading command is
// only warned. A clock within the allowance opens.
func TestAReplicaWhoseClockIsOffTheDatabasesIsRefused(t *testing.T) {
	dsn := pgtest.Schema(t)
	db, err := Open(context.Background(), dsn, Options{clock: func() time.Time { return time.Now().Add(maxClockOffset / 4) }})
	if err != nil {
		t.Fatalf("a clock within the allowance was refused: %v", err)
	}
	db.Close()
	for _, c := range []struct {
		skew time.Duration
		way  string
	}{{30 * time.Second, "ahead of"}, {-5 * time.Second, "behind"}} {
		clock := func() time.Time { return time.Now().Add(c.skew) }
		db, err := Open(context.Background(), dsn, Options{clock: clock})
		if err == nil {
			db.Close()
			t.Fatalf("a replica %s off the database's clock opened", c.skew)
		}
		for _, want := range []string{c.way + " the database's", "sync this machine's clock"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal of a clock %s off does not say %q: %v", c.skew, want, err)
			}
		}
		db, err = Open(context.Background(), dsn, Options{clock: clock, Existing: true})
		if err != nil {
			t.Errorf("a reading command with a skewed clock was refused: %v", err)
		} else {
			db.Close()
		}
	}
}
