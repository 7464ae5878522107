package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAClaimByAnEarlierVersionAfterAReleaseBeginsARunOfClaims: a replica
// of an earlier version, left running across migration 21, writes its
// claims without chain_from; one after a release would keep the released
// run's, and a step taken over from it would count that run's tool calls
// (a cancelled call's). The trigger begins the run for it: this version's
// takeover of its dead claim carries on from that claim. A row stored
// before the column (chain_from 0) begins its run at its own claim.
func TestAClaimByAnEarlierVersionAfterAReleaseBeginsARunOfClaims(t *testing.T) {
	a := replicas(t, 1)[0]
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	first, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("replica-a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", first.Version); err != nil { // a cancelled call
		t.Fatal(err)
	}
	// The earlier version's claim, in its own words, and its death: expired.
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET owner_id = 'old-replica', host = 'elsewhere', pid = 2, proc_start = 0,
		version = version + 1, claimed_at = now(), renewed_at = now(), expires_at = now() - interval '1 minute', released = false, ran_before_ms = 0
		WHERE tenant = $1 AND session_id = 's' AND agent_id = 'agent_a'`, a.tenant); err != nil {
		t.Fatal(err)
	}
	var chain int64
	if err := a.db.pool.QueryRow(ctx, `SELECT chain_from FROM leases WHERE tenant = $1 AND session_id = 's' AND agent_id = 'agent_a'`, a.tenant).Scan(&chain); err != nil {
		t.Fatal(err)
	}
	if chain != first.Version+1 {
		t.Errorf("the earlier version's claim after a release: its run of claims from %d; want its own version, %d", chain, first.Version+1)
	}
	next, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("replica-a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if next.ChainFrom != first.Version+1 {
		t.Errorf("the takeover of the earlier version's dead claim: its run of claims from %d; want that claim's, %d", next.ChainFrom, first.Version+1)
	}
	// A row written before migration 21 (chain_from 0), its holder dead:
	// the takeover's run of claims begins at that row's claim.
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET chain_from = 0, expires_at = now() - interval '1 minute'
		WHERE tenant = $1 AND session_id = 's' AND agent_id = 'agent_a'`, a.tenant); err != nil {
		t.Fatal(err)
	}
	after, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("replica-b"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if after.ChainFrom != next.Version {
		t.Errorf("the takeover of a row stored before runs of claims were: its run from %d; want that row's claim, %d", after.ChainFrom, next.Version)
	}
}
