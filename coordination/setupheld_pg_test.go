package coordination_test

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAHeldSetupIsServedOnlyWhileFinalAndItsSessions: the setup a run's
// loop holds is served at its end in place of a read only when no replica
// can have changed it. A session deleted on replica B and made again under
// its id there is read afresh on A (its created_at is not the held one's),
// and criteria B attaches before any step are seen on A (a setup with no
// step in the ledger may still change).
func TestAHeldSetupIsServedOnlyWhileFinalAndItsSessions(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	storeB := pgTenant(t, dsn)
	opts := coordination.Options{Open: backends.Open, Logger: zerolog.Nop()}
	a, b := coordination.NewService(pgTenant(t, dsn), opts), coordination.NewService(storeB, opts)
	team := func(id, task string) coordination.TeamSpec {
		seed := int64(5)
		return coordination.TeamSpec{SessionID: id, Task: task, Models: []string{"sim/strong", "sim/strong"}, Seed: &seed, Driver: coordination.DriverStep}
	}

	const id = "reused"
	old, err := a.Create(ctx, team(id, "The old task: name a colour."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if got, err := coordination.LoadHeld(a, ctx, old); err != nil || got.Task != old.Task {
		t.Fatalf("a stepped session's setup: task %q (%v); want %q", taskOf(got), err, old.Task)
	}
	if err := storeB.(coordination.SessionDeleter).DeleteSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	const newTask = "The new task: name a fruit."
	if _, err := b.Create(ctx, team(id, newTask)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if got, err := coordination.LoadHeld(a, ctx, old); err != nil || got.Task != newTask {
		t.Errorf("A's held setup after B made the session again: task %q (%v); want %q", taskOf(got), err, newTask)
	}

	unstepped, err := a.Create(ctx, team("criteria-later", "What is 17 * 23?"))
	if err != nil {
		t.Fatal(err)
	}
	items := []criteria.Item{{ID: "E1", Text: "shows its working", Category: "must"}}
	if err := b.AttachCriteria(ctx, unstepped.ID, items); err != nil {
		t.Fatal(err)
	}
	if got, err := coordination.LoadHeld(a, ctx, unstepped); err != nil || len(got.Criteria) != 1 {
		t.Errorf("A's held setup of an unstepped session after B attached criteria: %+v (%v); want B's criterion", criteriaOf(got), err)
	}
}

func taskOf(s *coordination.Session) string {
	if s == nil {
		return ""
	}
	return s.Task
}

func criteriaOf(s *coordination.Session) []criteria.Item {
	if s == nil {
		return nil
	}
	return s.Criteria
}
