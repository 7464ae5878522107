package coordination_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestACLIsAskEndedWithItsRunIsRefusedNotLeftForAPerson: a CLI agent's
// run ends (killed at a limit, at the grace after its call) while one of
// its permission questions waits for a person; its provider ends the
// question's context with the run (providers/cliagent's gate). The ask is
// then refused by "step ended" in the audit, is no longer pending, and a
// person's late approval is not taken: nobody approves a call that will
// never run, and the trail never reads approved.
func TestACLIsAskEndedWithItsRunIsRefusedNotLeftForAPerson(t *testing.T) {
	cli := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		run, end := context.WithTimeout(ctx, 300*time.Millisecond)
		defer end()
		if ran, _ := req.Permits.Check(run, "Bash", permissions.ForCommand("git push origin main")); ran {
			t.Error("the ask of a run that ended let its call run")
		}
		return providers.Action{}, providers.Free(), &providers.Error{Class: providers.ClassToolCalls, Message: "stopped at its tool-call limit"}
	})
	h, _ := fileHarness(t, map[string]providers.Provider{"openai/cli": cli, "sim:seed=7": &coordtest.Scripted{}})
	rules := &permissions.Rules{ApprovalTimeoutSeconds: 60}
	s := h.Create(coordination.TeamSpec{Task: buildTask, Driver: coordination.DriverStep, Agents: []coordination.Agent{
		{ID: "agent_a", Model: "openai/cli", Tools: &coordination.AgentTools{NoSandbox: true, Permissions: rules}},
		{ID: "agent_b", Model: "sim:seed=7"},
	}})
	ctx := context.Background()
	start := time.Now()
	_, _ = h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the step took %v: its ask waited for the approval timeout after its run ended", took.Round(time.Second))
	}
	recs, err := h.Service.PermissionLog(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var asked *permissions.Record
	for i := range recs {
		if recs[i].Tool == "Bash" {
			asked = &recs[i]
		}
	}
	if asked == nil {
		t.Fatalf("the audit holds no decision on the ask: %+v", recs)
	}
	if asked.Outcome != permissions.Refused || !strings.Contains(asked.By, "step ended") || asked.Request == "" {
		t.Errorf("the ask of the ended run is audited %s by %q (request %q); want refused by the step's end", asked.Outcome, asked.By, asked.Request)
	}
	if pending, _ := h.Service.PendingApprovals(ctx, s.ID); len(pending) != 0 {
		t.Errorf("the ask of the ended run is still pending for a person: %+v", pending)
	}
	if err := h.Service.Approve(ctx, s.ID, asked.Request, true, "late"); err == nil {
		t.Error("a person approved the ask of a run that had ended")
	}
}
