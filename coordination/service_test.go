package coordination_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

func TestTwoAgentsAgree(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	a, b := coordtest.Alias(s, "agent_a"), coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("four"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("4"), coordtest.Vote(b)}
	_ = a
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || res.Winner.AgentID != "agent_b" || *res.HowChosen != coordination.ChosenConsensus {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
	if *res.FinalAnswer != "4" || res.Steps != 4 {
		t.Fatalf("final %q steps %d", *res.FinalAnswer, res.Steps)
	}
}

func TestIdenticalBlindFirstAnswersAreBothAccepted(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	sc[0].Replies = []any{coordtest.Answer("The answer is 4.")}
	sc[1].Replies = []any{coordtest.Answer("The answer is 4.")}
	res := h.Run(s.ID)
	l := h.Ledger(s.ID)
	for _, id := range []string{"agent_a", "agent_b"} {
		if e := l.Agents[id][0]; e.Kind != coordination.KindAnswer {
			t.Fatalf("%s's blind first answer was refused: %+v", id, e)
		}
	}
	if res.Winner == nil {
		t.Fatal("no winner")
	}
}

func TestLaterDuplicateIsRefusedWithVoteHint(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	b := coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("first"), coordtest.Answer("  second\n answer "), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("second answer"), coordtest.Vote(b)}
	res := h.Run(s.ID)
	reqs := sc[0].Requests()
	if len(reqs) < 3 {
		t.Fatalf("agent_a made %d calls", len(reqs))
	}
	hist := reqs[2].History
	want := "that is already " + b + "'s answer — vote for it"
	if len(hist) != 1 || hist[0].Problem != want {
		t.Fatalf("history = %+v, want problem %q", hist, want)
	}
	if res.Winner.AgentID != "agent_b" {
		t.Fatalf("winner %+v", res.Winner)
	}
	l := h.Ledger(s.ID)
	if got := l.Agents["agent_a"][1]; got.Kind != coordination.KindVote {
		t.Fatalf("the corrected step is a vote: %+v", got)
	}
}

func TestCorrectiveRetryOnBadOutput(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	twoCalls := coordtest.Act(providers.NewAnswerCall("x"), providers.VoteCall("agent1", "y"))
	sc[0].Replies = []any{providers.Action{Text: "I think it is 4"}, twoCalls, coordtest.Answer("4")}
	sc[1].Replies = []any{coordtest.Answer("4!")}
	h.Run(s.ID)
	reqs := sc[0].Requests()
	if !strings.Contains(reqs[1].History[0].Problem, "did not call a workflow tool") {
		t.Fatalf("first problem: %q", reqs[1].History[0].Problem)
	}
	if !strings.Contains(reqs[2].History[1].Problem, "exactly one") {
		t.Fatalf("second problem: %q", reqs[2].History[1].Problem)
	}
	if e := h.Ledger(s.ID).Agents["agent_a"][0]; e.Kind != coordination.KindAnswer || e.Content != "4" {
		t.Fatalf("third attempt lands: %+v", e)
	}
}

func TestThreeBadAttemptsRecordBadOutput(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	text := providers.Action{Text: "no tool"}
	sc[0].Replies = []any{text, text, text, coordtest.Answer("ok")}
	sc[1].Replies = []any{coordtest.Answer("4")}
	h.Run(s.ID)
	e := h.Ledger(s.ID).Agents["agent_a"][0]
	if e.Kind != coordination.KindError || e.Class != providers.ClassBadOutput || e.Usage.Input != 30 {
		t.Fatalf("got %+v", e)
	}
}

func TestAllVoteForSelfRevotesThenForces(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 3)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	for i, id := range []string{"agent_a", "agent_b", "agent_c"} {
		me := coordtest.Alias(s, id)
		sc[i].Replies = []any{coordtest.Answer("answer of " + id), coordtest.Vote(me), coordtest.Vote(me)}
	}
	res := h.Run(s.ID)
	if *res.HowChosen != coordination.ChosenForcedStanding || !res.Tie || *res.StopReason != coordination.StopSplitVote {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
	l := h.Ledger(s.ID)
	revotes := 0
	for _, es := range l.Agents {
		for _, e := range es {
			if e.Revote {
				revotes++
			}
		}
	}
	if revotes != 3 {
		t.Fatalf("each agent re-votes once; got %d", revotes)
	}
	// The re-vote offers only vote and says the votes were split.
	last := sc[0].Requests()[2]
	if len(last.Tools) != 1 || last.Tools[0].Name != providers.ToolVote || !last.Revote || !strings.Contains(last.Prompt, "split") {
		t.Fatalf("re-vote request: tools %v revote %v", last.Tools, last.Revote)
	}
}

func TestDroppedAgentLeavesTheOthersToAgree(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 3)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	boom := &providers.Error{Class: providers.ClassOverloaded, Message: "overloaded"}
	a := coordtest.Alias(s, "agent_a")
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(a)}
	sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(a)}
	sc[2].Replies = []any{boom, boom, coordtest.Answer("never")}
	res := h.Run(s.ID)
	if res.Winner.AgentID != "agent_a" || *res.HowChosen != coordination.ChosenConsensus {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
	st, err := h.Service.Status(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Agents[2].Status != "dropped" {
		t.Fatalf("agent_c status %q", st.Agents[2].Status)
	}
	if es := h.Ledger(s.ID).Agents["agent_c"]; len(es) != 2 || es[0].Class != providers.ClassOverloaded {
		t.Fatalf("agent_c entries %+v", es)
	}
}

func TestCappedAgentsEndWithMaxRounds(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{MaxRounds: 2, MaxAnswersPerAgent: 5}})
	sc[0].Replies = []any{coordtest.Answer("1"), coordtest.Answer("1 again")}
	sc[1].Replies = []any{coordtest.Answer("2"), coordtest.Answer("2 again")}
	res := h.Run(s.ID)
	if *res.StopReason != coordination.StopMaxRounds || res.Steps != 4 {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
}

func TestAnswerCapOffersOnlyVote(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{MaxAnswersPerAgent: 1}})
	sc[0].Replies = []any{coordtest.Answer("1"), coordtest.Answer("1 again"), coordtest.Vote(coordtest.Alias(s, "agent_a"))}
	sc[1].Replies = []any{coordtest.Answer("2"), coordtest.Vote(coordtest.Alias(s, "agent_a"))}
	res := h.Run(s.ID)
	req := sc[0].Requests()[1]
	if len(req.Tools) != 1 || req.Tools[0].Name != providers.ToolVote {
		t.Fatalf("at the answer cap only vote is offered: %v", req.Tools)
	}
	if res.Winner.AgentID != "agent_a" {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	h := coordtest.New(t, map[string]providers.Provider{})
	many := make([]string, 17)
	for i := range many {
		many[i] = "sim"
	}
	cases := map[string]coordination.TeamSpec{
		"empty task":          {Task: "  ", Models: []string{"sim", "sim"}},
		"17 agents":           {Task: "x", Models: many},
		"unknown backend":     {Task: "x", Models: []string{"nosuch/model"}},
		"malformed spec":      {Task: "x", Models: []string{"openai/"}},
		"slash in id":         {Task: "x", Models: []string{"host"}, SessionID: "a/b"},
		"dotdot id":           {Task: "x", Models: []string{"host"}, SessionID: ".."},
		"anonymous agent":     {Task: "x", Agents: []coordination.Agent{{ID: "agent1", Model: "host"}}},
		"bad rule":            {Task: "x", Models: []string{"host"}, Rules: coordination.Rules{Consensus: "most"}},
		"early without short": {Task: "x", Models: []string{"host"}, Rules: coordination.Rules{EarlyStop: true}},
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := h.Service.Create(context.Background(), spec)
			if err == nil {
				t.Fatal("want an error")
			}
			if !errors.Is(err, coordination.ErrBadInput) && !errors.Is(err, coordination.ErrBadSpec) && !errors.Is(err, coordination.ErrBadSettings) && !errors.Is(err, coordination.ErrHostInRunTeam) {
				t.Fatalf("error %v is not one of the bad-input errors", err)
			}
			if ids, _ := h.Store.Sessions(context.Background()); len(ids) != 0 {
				t.Fatalf("something was written: %v", ids)
			}
			t.Log(err)
		})
	}
}
