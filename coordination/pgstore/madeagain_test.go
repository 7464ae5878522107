package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAReplicaReadsASessionMadeAgainWithItsOwnSetup: replica B reads a
// live session (its setup is then kept there); the session is cancelled
// on A, pruned by another process (the CLI's prune) and made again under
// the same id with another task and team. B serves the new session's
// setup, through a read that checks the kept setup (sessions.get: Status,
// Step) and through one that only lends the ledger (sessions.load: the
// listing), where it served the deleted one's.
func TestAReplicaReadsASessionMadeAgainWithItsOwnSetup(t *testing.T) {
	for _, first := range []string{"status", "listing"} {
		t.Run("read first by its "+first, func(t *testing.T) { madeAgain(t, first) })
	}
}

func madeAgain(t *testing.T, first string) {
	dsn := pgtest.Schema(t)
	a, b := replicaOn(t, dsn, Options{}), replicaOn(t, dsn, Options{})
	ctx := context.Background()
	opts := coordination.Options{Open: backends.Open, Parallel: 1, Logger: zerolog.Nop()}
	svcA, svcB := coordination.NewService(a, opts), coordination.NewService(b, opts)
	const id = "reused"
	seed := int64(3)
	if _, err := svcA.Create(ctx, coordination.TeamSpec{SessionID: id, Task: "The old task: name a colour.", Models: []string{"sim/strong", "sim/strong"}, Seed: &seed, Driver: coordination.DriverStep}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcA.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	// B reads the live session: its setup is kept there from now on.
	if v, err := svcB.Status(ctx, id); err != nil || v.Task != "The old task: name a colour." {
		t.Fatalf("B's status of the live session: %+v, %v", v, err)
	}
	if _, err := svcA.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	// A prune from another process (sessions prune) deletes it.
	pruner := coordination.NewService(a, coordination.Options{Logger: zerolog.Nop(), Now: func() time.Time { return time.Now().Add(48 * time.Hour) }})
	rep, err := pruner.Prune(ctx, coordination.PruneRequest{OlderThan: 24 * time.Hour})
	if err != nil || len(rep.Deleted) != 1 {
		t.Fatalf("the prune: %+v, %v; want the cancelled session deleted", rep, err)
	}
	// Made again under its id, with another task and three agents.
	const newTask = "The new task: name a fruit."
	if _, err := svcA.Create(ctx, coordination.TeamSpec{SessionID: id, Task: newTask, Models: []string{"sim/strong", "sim/strong", "sim/strong"}, Seed: &seed, Driver: coordination.DriverStep}); err != nil {
		t.Fatal(err)
	}
	if first == "listing" {
		list, err := svcB.Sessions(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("B's listing: %+v, %v", list, err)
		}
		if list[0].Task != newTask || len(list[0].Agents) != 3 {
			t.Errorf("B lists the session made again as %+v; want task %q and 3 agents", list[0], newTask)
		}
	}
	v, err := svcB.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.Task != newTask || len(v.Agents) != 3 {
		t.Errorf("replica B serves the session made again as task %q with %d agents; want %q with 3 (B kept the deleted session's setup)", v.Task, len(v.Agents), newTask)
	}
	// And B steps it by the old setup: the new session's third agent is
	// "no such agent" there.
	if _, err := svcB.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_c"}); err != nil {
		t.Errorf("replica B refuses a step of the new session's agent_c: %v", err)
	}
}
