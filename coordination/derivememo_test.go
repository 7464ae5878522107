package coordination

import "testing"

// TestDeriveMemoServesOnlyTheSameInputs: the memo returns the state it
// derived only for the same setup, the same lent ledger and the same agents
// in flight; any difference derives afresh, and what it returns is always
// what Derive returns.
func TestDeriveMemoServesOnlyTheSameInputs(t *testing.T) {
	svc := NewService(nil, Options{})
	b := newTeam(t, Rules{}, "a", "b", "c")
	b.answer("a", "Answer: 1")
	l := b.l
	first := svc.sessions.deriveLent(b.s, l, map[string]bool{"b": true})
	if again := svc.sessions.deriveLent(b.s, l, map[string]bool{"b": true}); again != first {
		t.Fatal("same setup, ledger and in-flight agents: the memoised state")
	}
	other := svc.sessions.deriveLent(b.s, l, map[string]bool{"c": true})
	if other == first || other.Agent("b").InFlight || !other.Agent("c").InFlight {
		t.Fatal("different agents in flight: derived afresh")
	}
	b.answer("b", "Answer: 2")
	l2 := &Ledger{Agents: b.l.Agents, Session: b.l.Session}
	if st := svc.sessions.deriveLent(b.s, l2, map[string]bool{"c": true}); st == other || st.Agent("b").Answers != 1 {
		t.Fatal("another ledger: derived afresh")
	}
	s2 := *b.s
	if st := svc.sessions.deriveLent(&s2, l2, map[string]bool{"c": true}); st.Agent("b").Answers != 1 {
		t.Fatal("another setup: derived afresh")
	}
	ended := &Ledger{Agents: l2.Agents, Session: append(append([]SessionEntry{}, l2.Session...), SessionEntry{Kind: SessionCancelled, Reason: "test"})}
	if st := svc.sessions.deriveLent(b.s, ended, nil); st.Life.Status == StatusRunning {
		t.Fatalf("a cancelled ledger derives as %s", st.Life.Status)
	}
	if _, kept := svc.sessions.derived.Get(b.s.ID); kept {
		t.Fatal("a session that is not running keeps no memo")
	}
	for _, inFlight := range []map[string]bool{nil, {"a": true}, {"a": true, "b": true, "c": true}} {
		got, want := svc.sessions.deriveLent(b.s, l2, inFlight), Derive(b.s, l2, inFlight)
		if len(got.Next) != len(want.Next) || got.Settled != want.Settled || got.Steps != want.Steps {
			t.Fatalf("in flight %v: memo gave %+v, Derive %+v", inFlight, got, want)
		}
	}
}

// TestMemoForServesAnAgentNotInFlight: a step checking it is due may use the
// memo whoever else it shows in flight, but never one showing the agent
// itself in flight, nor one of another ledger or setup.
func TestMemoForServesAnAgentNotInFlight(t *testing.T) {
	svc := NewService(nil, Options{})
	b := newTeam(t, Rules{}, "a", "b", "c")
	b.answer("a", "Answer: 1")
	l := &Ledger{Agents: b.l.Agents, Session: b.l.Session}
	st := svc.sessions.deriveLent(b.s, l, map[string]bool{"b": true})
	if got := svc.sessions.memoFor(b.s, l, "c"); got != st {
		t.Fatal("c is not in flight in the memo: served")
	}
	if got := svc.sessions.memoFor(b.s, l, "b"); got != nil {
		t.Fatal("b is in flight in the memo: not served")
	}
	if got := svc.sessions.memoFor(b.s, &Ledger{Agents: l.Agents, Session: l.Session}, "c"); got != nil {
		t.Fatal("another ledger: not served")
	}
	s2 := *b.s
	if got := svc.sessions.memoFor(&s2, l, "c"); got != nil {
		t.Fatal("another setup: not served")
	}
	if got := svc.sessions.memoFor(b.s, l, "nobody"); got != nil {
		t.Fatal("an agent not in the team: not served")
	}
}

// TestAnAgentsOwnStateIgnoresOthersInFlight pins what memoFor relies on:
// whether an agent is due, and why not, is the same whoever else is in
// flight — in round 0, with standing votes and during a re-vote.
func TestAnAgentsOwnStateIgnoresOthersInFlight(t *testing.T) {
	round0 := newTeam(t, Rules{}, "a", "b", "c")
	round0.answer("a", "Answer: 1")
	voting := newTeam(t, Rules{}, "a", "b", "c")
	voting.answer("a", "Answer: 1")
	voting.answer("b", "Answer: 2")
	voting.answer("c", "Answer: 2")
	voting.vote("a", "b")
	revote := splitVotes(t, Rules{})
	revote.session(SessionRevote, "a", "b")
	ids := []string{"a", "b", "c"}
	for name, b := range map[string]*team{"round 0": round0, "voting": voting, "revote": revote} {
		for _, self := range ids {
			alone := Derive(b.s, b.l, nil).Agent(self)
			for mask := 0; mask < 1<<len(ids); mask++ {
				inFlight := map[string]bool{}
				for i, id := range ids {
					if mask&(1<<i) != 0 && id != self {
						inFlight[id] = true
					}
				}
				got := Derive(b.s, b.l, inFlight).Agent(self)
				if got.Next != alone.Next || got.Why != alone.Why || got.Held != alone.Held {
					t.Fatalf("%s: %s with %v in flight: next=%v why=%q held=%v; alone next=%v why=%q held=%v",
						name, self, inFlight, got.Next, got.Why, got.Held, alone.Next, alone.Why, alone.Held)
				}
			}
		}
	}
}
