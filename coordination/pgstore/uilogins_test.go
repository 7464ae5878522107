package pgstore

import (
	"context"
	"testing"
	"time"
)

// TestALoginKeptByOneReplicaIsFoundAndEndedByAnother: a browser login kept
// through replica A is found through B; ended through B, A finds it no
// more; an expired one is found by neither; the cookie itself is never
// stored, only its SHA-256.
func TestALoginKeptByOneReplicaIsFoundAndEndedByAnother(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0].db.Logins(), rs[1].db.Logins()
	ctx := context.Background()
	const cookie = "dummy-cookie-not-a-login-0001"
	if err := a.Keep(ctx, cookie, "acme", "csrf-1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	tenant, csrf, _, ok, err := b.Find(ctx, cookie)
	if err != nil || !ok || tenant != "acme" || csrf != "csrf-1" {
		t.Fatalf("B finds %q %q %v %v; want acme's login", tenant, csrf, ok, err)
	}
	var stored int
	if err := rs[0].db.pool.QueryRow(ctx, `SELECT count(*) FROM ui_logins WHERE id_sha256 = $1 OR tenant = $1 OR csrf = $1`, cookie).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("the cookie is stored as it is (%d rows, %v)", stored, err)
	}
	if err := b.End(ctx, cookie); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok, err := a.Find(ctx, cookie); ok || err != nil {
		t.Errorf("A still finds a login B ended: %v %v", ok, err)
	}
	if err := a.Keep(ctx, "dummy-cookie-expired-0002", "acme", "csrf-2", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok, _ := b.Find(ctx, "dummy-cookie-expired-0002"); ok {
		t.Error("an expired login is found")
	}
}
