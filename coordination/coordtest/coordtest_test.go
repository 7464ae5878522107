package coordtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestScriptedPlaysItsRepliesThenFallsBack: a Scripted provider returns its
// replies in order, an error as the call's error, then votes for the first
// name offered or, with no vote to cast, answers; it records every request.
func TestScriptedPlaysItsRepliesThenFallsBack(t *testing.T) {
	boom := errors.New("boom")
	sc := &coordtest.Scripted{Replies: []any{coordtest.Answer("4"), boom}}
	answerOnly := providers.Request{AgentID: "agent_a", StepNumber: 1, Tools: []providers.Tool{{Name: providers.ToolNewAnswer}}}
	mayVote := providers.Request{AgentID: "agent_a", StepNumber: 3, VoteEnum: []string{"agent2", "agent1"},
		Tools: []providers.Tool{{Name: providers.ToolNewAnswer}, {Name: providers.ToolVote}}}
	ctx := context.Background()

	act, u, err := sc.Step(ctx, answerOnly)
	if err != nil || coordtest.JSON(act) != coordtest.JSON(coordtest.Answer("4")) {
		t.Fatalf("first call: %s, %v; want the scripted answer", coordtest.JSON(act), err)
	}
	if u.Input != 10 || u.Output != 5 || u.CostUSD == nil || *u.CostUSD != 0 {
		t.Fatalf("usage %+v, want 10 in, 5 out, free", u)
	}
	if _, _, err := sc.Step(ctx, answerOnly); !errors.Is(err, boom) {
		t.Fatalf("second call: %v, want the scripted error", err)
	}
	if act, _, _ := sc.Step(ctx, mayVote); len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote || !strings.Contains(string(act.Calls[0].Args), `"agent2"`) {
		t.Fatalf("past the script with a vote to cast: %s, want a vote for agent2", coordtest.JSON(act))
	}
	if act, _, _ := sc.Step(ctx, answerOnly); len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer || !strings.Contains(string(act.Calls[0].Args), "fallback answer agent_a 1") {
		t.Fatalf("past the script with only answering allowed: %s, want a fallback answer", coordtest.JSON(act))
	}
	if reqs := sc.Requests(); len(reqs) != 4 || reqs[2].StepNumber != 3 {
		t.Fatalf("recorded %d requests (%+v), want the four in order", len(reqs), reqs)
	}
}

// TestHarnessRunsATeamToTheEnd: a scripted team created and run through the
// harness reaches consensus on the answer both voted for, and the ledger it
// reads back holds every step.
func TestHarnessRunsATeamToTheEnd(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	if s.Task != "What is 2+2?" {
		t.Fatalf("task %q, want the harness's default", s.Task)
	}
	b := coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("four"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("4"), coordtest.Vote(b)}
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || res.Winner == nil || res.Winner.AgentID != "agent_b" || *res.FinalAnswer != "4" {
		t.Fatalf("got %s, want agent_b's 4 by consensus", coordtest.JSON(res))
	}
	l := h.Ledger(s.ID)
	if len(l.Agents["agent_a"]) != 2 || len(l.Agents["agent_b"]) != 2 {
		t.Fatalf("ledger holds %d and %d steps, want 2 each", len(l.Agents["agent_a"]), len(l.Agents["agent_b"]))
	}
}

// TestHarnessRefusesASpecItHasNoProviderFor: Open names the spec a test
// forgot, rather than opening some other provider.
func TestHarnessRefusesASpecItHasNoProviderFor(t *testing.T) {
	h := coordtest.New(t, nil)
	sp, err := providers.ParseSpec("sim:seed=7")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Open(sp); err == nil || !strings.Contains(err.Error(), sp.String()) {
		t.Fatalf("Open(%s) = %v, want an error naming the spec", sp, err)
	}
}

// TestNewWithKeepsTheCallersOptions: the Service NewWith builds has the
// options given (here a clock) and, without an Open, the harness's providers.
func TestNewWithKeepsTheCallersOptions(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h := coordtest.NewWith(t, provs, coordination.Options{Now: func() time.Time { return at }})
	s := h.Create(coordination.TeamSpec{Models: models})
	if !s.CreatedAt.Equal(at) {
		t.Fatalf("session created at %v, want the given clock's %v", s.CreatedAt, at)
	}
	if res := h.Run(s.ID); res.Status != coordination.StatusFinished {
		t.Fatalf("got %s, want the scripted team to finish", coordtest.JSON(res))
	}
}
