package coordination

import (
	"slices"
	"testing"
)

func TestVoteGoesStaleWhenPeerAnswersAgain(t *testing.T) {
	b := newTeam(t, Rules{}, "a", "b")
	b.answer("a", "4")
	b.answer("b", "5")
	v := b.vote("a", "b")
	if IsVoteStale(v, LatestAnswerSteps(b.l)) {
		t.Fatal("a vote that saw every answer is not stale")
	}
	b.answer("b", "four")
	if !IsVoteStale(v, LatestAnswerSteps(b.l)) {
		t.Fatal("a vote must go stale when a peer answers again")
	}
	if st := b.state(); st.Agent("a").StandingVote != nil {
		t.Fatal("a stale vote does not stand")
	}
}

func TestVoteStaleWhenSeenStepsMissingOrKeyAbsent(t *testing.T) {
	latest := map[string]int{"a": 1, "b": 2}
	cases := []struct {
		name  string
		seen  map[string]int
		stale bool
	}{
		{"missing", nil, true},
		{"empty", map[string]int{}, true},
		{"missing key counts as 0", map[string]int{"a": 1}, true},
		{"saw everything", map[string]int{"a": 1, "b": 2}, false},
		{"saw more than exists", map[string]int{"a": 3, "b": 2}, false},
		{"behind on one", map[string]int{"a": 1, "b": 1}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := IsVoteStale(&Entry{SeenSteps: c.seen}, latest); got != c.stale {
				t.Fatalf("stale = %v, want %v", got, c.stale)
			}
		})
	}
}

func TestErrorAfterVoteKeepsStandingVote(t *testing.T) {
	b := newTeam(t, Rules{}, "a", "b")
	b.answer("a", "4")
	b.answer("b", "4 too")
	b.vote("a", "b")
	b.fail("a")
	if b.state().Agent("a").StandingVote == nil {
		t.Fatal("an error entry after a vote must not erase it")
	}
}

func TestDroppedAfterConsecutiveFailuresOnly(t *testing.T) {
	b := newTeam(t, Rules{MaxAgentFailures: 2, MaxRounds: 10}, "a", "b")
	b.fail("a")
	b.answer("a", "x")
	b.fail("a")
	if b.state().Agent("a").Dropped {
		t.Fatal("failures separated by an answer are not consecutive")
	}
	b.fail("a")
	st := b.state()
	if !st.Agent("a").Dropped || slices.Contains(st.Next, "a") {
		t.Fatal("two consecutive failures drop the agent")
	}
}

func TestCappedAgentIsNotNext(t *testing.T) {
	b := newTeam(t, Rules{MaxRounds: 2}, "a", "b")
	b.answer("a", "1")
	b.answer("b", "2")
	b.answer("a", "3")
	st := b.state()
	if !st.Agent("a").Capped || slices.Contains(st.Next, "a") {
		t.Fatalf("a used its 2 steps and must be capped; next = %v", st.Next)
	}
}

func TestRoundZeroBarrierHoldsAnsweredAgents(t *testing.T) {
	b := newTeam(t, Rules{}, "a", "b", "c")
	b.answer("a", "1")
	st := b.state("b")
	if !st.Agent("a").Held || slices.Contains(st.Next, "a") {
		t.Fatal("a has answered and must wait for b and c")
	}
	if !slices.Equal(st.Next, []string{"c"}) {
		t.Fatalf("next = %v, want [c] (b is in flight)", st.Next)
	}
	b.answer("b", "2")
	b.answer("c", "3")
	if st := b.state(); !slices.Equal(st.Next, []string{"a", "b", "c"}) {
		t.Fatalf("after round 0 everyone acts; next = %v", st.Next)
	}
}

func TestBarrierIgnoresAgentsThatCannotAnswer(t *testing.T) {
	b := newTeam(t, Rules{MaxAgentFailures: 1}, "a", "b")
	b.answer("a", "1")
	b.fail("b") // dropped with no answer
	st := b.state()
	if st.Round0 || st.Agent("a").Held {
		t.Fatal("a dropped agent without an answer must not hold the barrier")
	}
}

func TestSettledNeedsNothingInFlight(t *testing.T) {
	b := newTeam(t, Rules{}, "a", "b")
	b.answer("a", "1")
	b.answer("b", "2")
	b.vote("a", "b")
	b.vote("b", "b")
	if st := b.state(); !st.Settled {
		t.Fatal("every agent has a standing vote: settled")
	}
	if st := b.state("a"); st.Settled {
		t.Fatal("a step in flight means not settled")
	}
}

func TestRevoteAsksOnlyListedAgentsOnce(t *testing.T) {
	b := newTeam(t, Rules{}, "a", "b")
	b.answer("a", "1")
	b.answer("b", "2")
	b.vote("a", "a")
	b.vote("b", "b")
	b.session(SessionRevote, "a", "b")
	st := b.state()
	if !slices.Equal(st.Next, []string{"a", "b"}) || !slices.Equal(st.Pending, []string{"a", "b"}) {
		t.Fatalf("next = %v, pending = %v", st.Next, st.Pending)
	}
	b.revote("a", "b")
	if st := b.state(); !slices.Equal(st.Next, []string{"b"}) {
		t.Fatalf("after a's re-vote only b is due; next = %v", st.Next)
	}
}

func TestLifecycleFromSessionEntries(t *testing.T) {
	b := newTeam(t, Rules{}, "a")
	b.session(SessionCancelled)
	if st := b.state(); st.Life.Status != StatusCancelled || len(st.Next) != 0 {
		t.Fatalf("status %s next %v", st.Life.Status, st.Next)
	}
	b.session(SessionResumed)
	if st := b.state(); st.Life.Status != StatusRunning || len(st.Next) != 1 {
		t.Fatalf("status %s next %v", st.Life.Status, st.Next)
	}
}
