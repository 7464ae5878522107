package pgstore

import (
	"context"
	"fmt"
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
	if err := a.Keep(ctx, cookie, "acme", "csrf-1", "fp-1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	tenant, csrf, credential, _, ok, err := b.Find(ctx, cookie)
	if err != nil || !ok || tenant != "acme" || csrf != "csrf-1" || credential != "fp-1" {
		t.Fatalf("B finds %q %q %q %v %v; want acme's login", tenant, csrf, credential, ok, err)
	}
	var stored int
	if err := rs[0].db.pool.QueryRow(ctx, `SELECT count(*) FROM ui_logins WHERE id_sha256 = $1 OR tenant = $1 OR csrf = $1`, cookie).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("the cookie is stored as it is (%d rows, %v)", stored, err)
	}
	if err := b.End(ctx, cookie); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, ok, err := a.Find(ctx, cookie); ok || err != nil {
		t.Errorf("A still finds a login B ended: %v %v", ok, err)
	}
	if err := a.Keep(ctx, "dummy-cookie-expired-0002", "acme", "csrf-2", "", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, ok, _ := b.Find(ctx, "dummy-cookie-expired-0002"); ok {
		t.Error("an expired login is found")
	}
}

// TestATenantsLoginsAreCapped: a token's holder logging in in a loop keeps
// at most maxLoginsPerTenant logins, the newest; another tenant's stay.
func TestATenantsLoginsAreCapped(t *testing.T) {
	st := replicas(t, 1)[0]
	l, ctx := st.db.Logins(), context.Background()
	if err := l.Keep(ctx, "dummy-cookie-other-tenant", "other", "c", "", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(time.Hour)
	for i := range maxLoginsPerTenant + 5 {
		if err := l.Keep(ctx, fmt.Sprintf("dummy-cookie-%04d", i), "acme", "c", "", start.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := st.db.pool.QueryRow(ctx, `SELECT count(*) FROM ui_logins WHERE tenant = 'acme'`).Scan(&n); err != nil || n != maxLoginsPerTenant {
		t.Errorf("acme keeps %d logins (%v), want %d", n, err, maxLoginsPerTenant)
	}
	if _, _, _, _, ok, _ := l.Find(ctx, fmt.Sprintf("dummy-cookie-%04d", maxLoginsPerTenant+4)); !ok {
		t.Error("the newest login went")
	}
	if _, _, _, _, ok, _ := l.Find(ctx, "dummy-cookie-0000"); ok {
		t.Error("the oldest login stayed")
	}
	if _, _, _, _, ok, _ := l.Find(ctx, "dummy-cookie-other-tenant"); !ok {
		t.Error("another tenant's login went")
	}
}
