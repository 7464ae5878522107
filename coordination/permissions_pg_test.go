package coordination_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// pgReplicas are two services on one fresh PostgreSQL schema, each with
// its own pool, as two massgen-mcp processes sharing the database; open
// opens their models (backends.Open when nil).
func pgReplicas(t *testing.T, open func(providers.Spec) (providers.Provider, error)) (a, b *coordination.Service) {
	if open == nil {
		open = backends.Open
	}
	dsn := pgtest.Schema(t)
	replica := func() *coordination.Service {
		return coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: open})
	}
	return replica(), replica()
}

// pgTenant opens a replica's store of tenant acme on dsn, closed with
// the test.
func pgTenant(t *testing.T, dsn string) coordination.Store {
	t.Helper()
	db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, err := db.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestAnAskOnAPostgresBackedServerIsAnsweredFromAnotherProcess: with no
// session directory, the ask is a row that another replica (or `massgen-mcp
// approve --store postgres://…`) answers; unanswered, it is refused at its
// timeout, and the refusal is the row a late answer finds.
func TestAnAskOnAPostgresBackedServerIsAnsweredFromAnotherProcess(t *testing.T) {
	server, other := pgReplicas(t, nil)
	ctx := context.Background()
	s := stepSession(t, server)
	push := permissions.Action{Kind: permissions.Git, Target: "push origin main"}
	for _, approve := range []bool{true, false} {
		type answer struct {
			ok          bool
			by, request string
		}
		got := make(chan answer, 1)
		go func() {
			ok, by, req := coordination.Ask(server, ctx, s.ID, "agent_a", permissions.Rules{ApprovalTimeoutSeconds: 60}, push)
			got <- answer{ok, by, req}
		}()
		var pending []permissions.ApprovalRequest
		for deadline := time.Now().Add(20 * time.Second); len(pending) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			pending, _ = other.PendingApprovals(ctx, s.ID)
		}
		if len(pending) != 1 || pending[0].Agent != "agent_a" || pending[0].Action != push {
			t.Fatalf("the other replica sees pending %+v", pending)
		}
		if err := other.Approve(ctx, s.ID, pending[0].ID, approve, "ops"); err != nil {
			t.Fatal(err)
		}
		a := <-got
		if a.ok != approve || a.by != "file handshake (ops)" || a.request != pending[0].ID {
			t.Errorf("answered %v: the ask got %+v", approve, a)
		}
		if err := other.Approve(ctx, s.ID, pending[0].ID, !approve, "late"); err == nil {
			t.Error("a second answer was accepted")
		}
	}
	ok, by, req := coordination.Ask(server, ctx, s.ID, "agent_a", permissions.Rules{ApprovalTimeoutSeconds: 1}, push)
	if ok || by != "file handshake (timeout)" || req == "" {
		t.Errorf("an unanswered ask: approved %v by %q (request %q), want refused by the timeout", ok, by, req)
	}
	if err := other.Approve(ctx, s.ID, req, true, "late"); err == nil {
		t.Error("an answer after the timeout's refusal was accepted")
	}
	if pending, _ := other.PendingApprovals(ctx, s.ID); len(pending) != 0 {
		t.Errorf("asks left pending: %+v", pending)
	}
}
