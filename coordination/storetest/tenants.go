package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// RunStores runs the cases of a coordination.Stores: one store per tenant,
// the same each time, tenants that never see each other's sessions, and
// names ValidTenant refuses refused before anything opens.
func RunStores(t *testing.T, open func(t *testing.T) coordination.Stores) {
	t.Run("SameTenantSameStore", func(t *testing.T) {
		ss := open(t)
		a, err := ss.For(coordination.DefaultTenant)
		if err != nil {
			t.Fatal(err)
		}
		create(t, a, "s1")
		again, err := ss.For(coordination.DefaultTenant)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := again.Session(context.Background(), "s1"); err != nil {
			t.Fatalf("the default tenant's store, opened again, lost its session: %v", err)
		}
	})
	t.Run("TenantsDoNotSeeEachOthersSessions", func(t *testing.T) {
		ss := open(t)
		def, err := ss.For(coordination.DefaultTenant)
		if err != nil {
			t.Fatal(err)
		}
		acme, err := ss.For("acme")
		if err != nil {
			t.Fatal(err)
		}
		create(t, acme, "s1")
		if _, err := def.Session(context.Background(), "s1"); !errors.Is(err, coordination.ErrSessionNotFound) {
			t.Fatalf("another tenant's session read from the default tenant: %v, want ErrSessionNotFound", err)
		}
		create(t, def, "s1") // the same id is free in another tenant
		ids, err := acme.Sessions(context.Background())
		if err != nil || len(ids) != 1 {
			t.Fatalf("acme lists %v (%v), want its one session", ids, err)
		}
	})
	t.Run("DeletingASessionLeavesAnotherTenantsOfTheSameID", func(t *testing.T) {
		testDeleteStaysInItsTenant(t, open(t))
	})
	t.Run("TenantsKeepTheirOwnPermissionsAndApprovals", func(t *testing.T) {
		ss := open(t)
		def, _ := ss.For(coordination.DefaultTenant)
		acme, err := ss.For("acme")
		if err != nil {
			t.Fatal(err)
		}
		create(t, def, "s1")
		create(t, acme, "s1")
		ctx := context.Background()
		if log, ok := acme.(coordination.PermissionLog); ok {
			if err := log.AppendPermission(ctx, "s1", decisions()[0]); err != nil {
				t.Fatal(err)
			}
			if got, _ := def.(coordination.PermissionLog).Permissions(ctx, "s1"); len(got) != 0 {
				t.Errorf("the default tenant reads acme's permission decisions: %+v", got)
			}
		}
		if box, ok := acme.(coordination.ApprovalBox); ok {
			req := request("eeee000005", ms(time.Now()))
			if err := box.RequestApproval(ctx, "s1", req); err != nil {
				t.Fatal(err)
			}
			other := def.(coordination.ApprovalBox)
			if got, _ := other.PendingApprovals(ctx, "s1"); len(got) != 0 {
				t.Errorf("the default tenant sees acme's pending asks: %+v", got)
			}
			if err := other.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: req.ID, Approve: true, At: ms(time.Now())}); !errors.Is(err, permissions.ErrNoRequest) {
				t.Errorf("the default tenant answered acme's ask: %v", err)
			}
		}
	})
	t.Run("BadTenantNamesAreRefused", func(t *testing.T) {
		ss := open(t)
		for _, name := range []string{"", "..", "../x", "a/b", "a b", "é", strings.Repeat("a", 65)} {
			if st, err := ss.For(name); !errors.Is(err, coordination.ErrBadInput) || st != nil {
				t.Errorf("For(%q) = %v, %v; want ErrBadInput and no store", name, st, err)
			}
		}
	})
}
