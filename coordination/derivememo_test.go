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
	first := svc.deriveLent(b.s, l, map[string]bool{"b": true})
	if again := svc.deriveLent(b.s, l, map[string]bool{"b": true}); again != first {
		t.Fatal("same setup, ledger and in-flight agents: the memoised state")
	}
	other := svc.deriveLent(b.s, l, map[string]bool{"c": true})
	if other == first || other.Agent("b").InFlight || !other.Agent("c").InFlight {
		t.Fatal("different agents in flight: derived afresh")
	}
	b.answer("b", "Answer: 2")
	l2 := &Ledger{Agents: b.l.Agents, Session: b.l.Session}
	if st := svc.deriveLent(b.s, l2, map[string]bool{"c": true}); st == other || st.Agent("b").Answers != 1 {
		t.Fatal("another ledger: derived afresh")
	}
	s2 := *b.s
	if st := svc.deriveLent(&s2, l2, map[string]bool{"c": true}); st.Agent("b").Answers != 1 {
		t.Fatal("another setup: derived afresh")
	}
	ended := &Ledger{Agents: l2.Agents, Session: append(append([]SessionEntry{}, l2.Session...), SessionEntry{Kind: SessionCancelled, Reason: "test"})}
	if st := svc.deriveLent(b.s, ended, nil); st.Life.Status == StatusRunning {
		t.Fatalf("a cancelled ledger derives as %s", st.Life.Status)
	}
	if _, kept := svc.derived.Load(b.s.ID); kept {
		t.Fatal("a session that is not running keeps no memo")
	}
	for _, inFlight := range []map[string]bool{nil, {"a": true}, {"a": true, "b": true, "c": true}} {
		got, want := svc.deriveLent(b.s, l2, inFlight), Derive(b.s, l2, inFlight)
		if len(got.Next) != len(want.Next) || got.Settled != want.Settled || got.Steps != want.Steps {
			t.Fatalf("in flight %v: memo gave %+v, Derive %+v", inFlight, got, want)
		}
	}
}
