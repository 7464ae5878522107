package webui

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestATenantsLoginsInMemoryAreCapped: a token's holder logging in in a
// loop keeps at most maxLogins logins, the newest; another tenant's login
// stays. Before, one cap across every tenant let any tenant log every
// other tenant's browsers out (as the database's logins already were not).
func TestATenantsLoginsInMemoryAreCapped(t *testing.T) {
	m, ctx := &memoryLogins{sessions: map[string]Login{}}, context.Background()
	later := time.Now().Add(time.Hour)
	if err := m.Put(ctx, "dummy-cookie-other-tenant", Login{Tenant: "other", Expires: later}); err != nil {
		t.Fatal(err)
	}
	for i := range maxLogins + 5 {
		if err := m.Put(ctx, fmt.Sprintf("dummy-cookie-%04d", i), Login{Tenant: "acme", Expires: later}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := m.Get(ctx, "dummy-cookie-other-tenant"); !ok {
		t.Error("another tenant's login went")
	}
	if _, ok, _ := m.Get(ctx, fmt.Sprintf("dummy-cookie-%04d", maxLogins+4)); !ok {
		t.Error("the newest login went")
	}
	if _, ok, _ := m.Get(ctx, "dummy-cookie-0004"); ok {
		t.Error("acme keeps more than its cap")
	}
	m.Delete(ctx, fmt.Sprintf("dummy-cookie-%04d", maxLogins+4))
	if n := len(m.order["acme"]); n != maxLogins-1 {
		t.Errorf("acme's order holds %d ids after a logout, want %d", n, maxLogins-1)
	}
}
