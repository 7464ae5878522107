package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAReplicaTheDatabaseWasUpgradedPastStepsAside: in a rolling upgrade
// the first replica of a newer massgen-mcp migrates the database while the
// older ones still run. An older replica's writes would not follow the new
// schema's rules, so once the schema is past its own its health check says
// so (a load balancer takes it out) and it takes over no other replica's
// run: a dead replica's run it would have claimed is left for a current
// one. Before, it went on serving and claiming as if nothing had changed.
func TestAReplicaTheDatabaseWasUpgradedPastStepsAside(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("dead")); err != nil {
		t.Fatal(err)
	}
	dead := coordination.LeaseOwner{ID: "dead-replica", Host: "elsewhere", PID: 1}
	if _, err := a.AcquireRun(ctx, "dead", dead, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if ids, err := a.Abandoned(ctx); err != nil || !slices.Equal(ids, []string{"dead"}) {
		t.Fatalf("Abandoned = %v, %v; want the dead replica's run, for a current replica to claim", ids, err)
	}
	if err := a.Ping(ctx); err != nil {
		t.Fatalf("a ping before the upgrade: %v", err)
	}
	known, err := knownSchema()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, known+1, fmt.Sprintf("%04d_from_a_newer_binary.sql", known+1)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(pingFresh + 50*time.Millisecond) // the last answer stands that long
	err = a.Ping(ctx)
	if !errors.Is(err, coordination.ErrServerBehind) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", known+1)) || !strings.Contains(err.Error(), "restart it on the new version") {
		t.Fatalf("a ping after the upgrade = %v; want ErrServerBehind naming the versions and what to do", err)
	}
	svc := coordination.NewService(a, coordination.Options{})
	ids, err := svc.ResumeInterrupted(ctx, nil)
	if !errors.Is(err, coordination.ErrServerBehind) || len(ids) != 0 {
		t.Errorf("ResumeInterrupted = %v, %v; want nothing resumed, ErrServerBehind", ids, err)
	}
	if l, err := a.ReadRun(ctx, "dead"); err != nil || l == nil || l.ID != dead.ID {
		t.Errorf("the dead replica's run lease reads %+v, %v; want it left unclaimed", l, err)
	}
}
