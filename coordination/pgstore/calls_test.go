package pgstore

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestACallIsClaimedOnceAndItsResultReachesAnotherReplica: of replicas
// claiming one call at once exactly one wins; the others see it running,
// then its kept result; collected, a new caller claims it anew while one
// that was waiting on the holder still reads its result; another tenant
// never sees it; a lapsed claim is taken over and the lapsed holder can
// neither renew nor keep.
func TestACallIsClaimedOnceAndItsResultReachesAnotherReplica(t *testing.T) {
	rs := replicas(t, 2)
	ctx := context.Background()
	const key = "0f0f"
	var (
		mu   sync.Mutex
		wins []string
		wg   sync.WaitGroup
	)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := []string{"a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4"}[i]
			mine, by, res, err := rs[i%2].ClaimCall(ctx, key, holder, "", time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if res != nil {
				t.Errorf("%s read a result %s of a call still running", holder, res)
			}
			if mine {
				mu.Lock()
				wins = append(wins, by)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(wins) != 1 {
		t.Fatalf("claims won: %v; want exactly one", wins)
	}
	holder := wins[0]
	a, b := rs[0], rs[1]
	if mine, by, res, err := b.ClaimCall(ctx, key, "late", "", time.Minute); err != nil || mine || by != holder || res != nil {
		t.Fatalf("a late claim: mine %v, by %q, result %s, %v; want the running holder %q", mine, by, res, err, holder)
	}
	if ok, err := a.RenewCall(ctx, key, holder, time.Minute); err != nil || !ok {
		t.Fatalf("the holder's renewal: %v, %v", ok, err)
	}
	if ok, err := a.RenewCall(ctx, key, "late", time.Minute); err != nil || ok {
		t.Fatalf("a renewal by another: %v, %v; want refused", ok, err)
	}
	if err := a.KeepCall(ctx, key, holder, []byte(`{"value":1}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if mine, by, res, err := b.ClaimCall(ctx, key, "retry", "", time.Minute); err != nil || mine || by != holder || string(res) != `{"value":1}` {
		t.Fatalf("a retry on the other replica: mine %v, by %q, result %s, %v; want the kept result", mine, by, res, err)
	}
	other, err := a.db.For("another-tenant")
	if err != nil {
		t.Fatal(err)
	}
	if mine, by, res, err := other.(*Store).ClaimCall(ctx, key, "tenant2", "", time.Minute); err != nil || !mine || res != nil {
		t.Fatalf("another tenant's call of the same key: mine %v, by %q, result %s, %v; want its own claim", mine, by, res, err)
	}
	if err := b.CollectCall(ctx, key, holder); err != nil {
		t.Fatal(err)
	}
	if mine, _, res, err := a.ClaimCall(ctx, key, "waiter", holder, time.Minute); err != nil || mine || string(res) != `{"value":1}` {
		t.Fatalf("a caller that waited on the holder after collection: mine %v, result %s, %v; want the result", mine, res, err)
	}
	if mine, by, res, err := a.ClaimCall(ctx, key, "fresh", "", 50*time.Millisecond); err != nil || !mine || by != "fresh" || res != nil {
		t.Fatalf("a new call after collection: mine %v, by %q, result %s, %v; want a claim of its own", mine, by, res, err)
	}
	time.Sleep(100 * time.Millisecond)
	if mine, by, _, err := b.ClaimCall(ctx, key, "taker", "fresh", time.Minute); err != nil || !mine || by != "taker" {
		t.Fatalf("a claim of a lapsed call: mine %v, by %q, %v; want it taken", mine, by, err)
	}
	if ok, err := a.RenewCall(ctx, key, "fresh", time.Minute); err != nil || ok {
		t.Fatalf("the lapsed holder renews: %v, %v; want refused", ok, err)
	}
	if err := a.KeepCall(ctx, key, "fresh", []byte(`{}`), time.Minute); err == nil {
		t.Fatal("the lapsed holder kept a result over the new claim")
	}
	if err := b.ReleaseCall(ctx, key, "taker"); err != nil {
		t.Fatal(err)
	}
	if mine, by, _, err := a.ClaimCall(ctx, key, "after", "", time.Minute); err != nil || !mine || by != "after" {
		t.Fatalf("a claim after a release: mine %v, by %q, %v", mine, by, err)
	}
}

// TestALosingClaimNeverReadsTheResultItsRivalReplaced: a claim that loses
// the race for a collected call to another claim made after its statement
// began reads no result, not the collected one its snapshot still holds:
// that old result is not the answer to the new call.
func TestALosingClaimNeverReadsTheResultItsRivalReplaced(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	const key = "0a0a"
	if mine, _, _, err := a.ClaimCall(ctx, key, "old", "", time.Minute); err != nil || !mine {
		t.Fatalf("the first claim: %v, %v", mine, err)
	}
	if err := a.KeepCall(ctx, key, "old", []byte(`{"value":"OLD"}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.CollectCall(ctx, key, "old"); err != nil {
		t.Fatal(err)
	}
	// The rival's claim, held open in its transaction.
	tx, err := a.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE calls SET holder = 'rival', result = NULL, collected = false, expires_at = now() + interval '1 minute'
		WHERE tenant = $1 AND key = $2`, a.tenant, key); err != nil {
		t.Fatal(err)
	}
	type claim struct {
		mine   bool
		by     string
		result []byte
		err    error
	}
	got := make(chan claim, 1)
	go func() {
		var c claim
		c.mine, c.by, c.result, c.err = b.ClaimCall(ctx, key, "late", "", time.Minute)
		got <- c
	}()
	time.Sleep(200 * time.Millisecond) // the late claim waits on the rival's row
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c := <-got
	if c.err != nil || c.mine || c.result != nil {
		t.Fatalf("the losing claim: mine %v, by %q, result %s, %v; want no claim and no result", c.mine, c.by, c.result, c.err)
	}
	if mine, by, res, err := b.ClaimCall(ctx, key, "late", "", time.Minute); err != nil || mine || by != "rival" || res != nil {
		t.Fatalf("looking again: mine %v, by %q, result %s, %v; want the rival's running call", mine, by, res, err)
	}
}
