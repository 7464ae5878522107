package coordination

import "slices"

// deriveMemo remembers a session's latest derivation from a lent ledger. A
// lent ledger never changes (the store lends a new one after any write), and
// Derive is a pure function of the setup, the ledger and who is in flight,
// so the same three give the same state. A step is derived twice with
// nothing changed in between — when the previous step lands (to decide) and
// when the next one takes its lock (to check it is due) — and the second
// derivation is served from here. States are read-only once derived.
type deriveMemo struct {
	s        *Session
	l        *Ledger
	inFlight uint64 // bit i: s.Agents[i] is in flight
	st       *State
}

// inFlightMask packs who is in flight by team position; ok is false for a
// team too large to pack (never memoised).
func inFlightMask(s *Session, inFlight map[string]bool) (mask uint64, ok bool) {
	if len(s.Agents) > 64 {
		return 0, false
	}
	for i := range s.Agents {
		if inFlight[s.Agents[i].ID] {
			mask |= 1 << i
		}
	}
	return mask, true
}

// deriveLent derives from a lent ledger, reusing the session's latest
// derivation when setup, ledger and in-flight agents are the same.
func (ss *sessions) deriveLent(s *Session, l *Ledger, inFlight map[string]bool) *State {
	mask, ok := inFlightMask(s, inFlight)
	if !ok {
		return ss.forgetEnded(s, Derive(s, l, inFlight))
	}
	if m, found := ss.derived.Get(s.ID); found && m.s == s && m.l == l && m.inFlight == mask {
		return m.st
	}
	st := Derive(s, l, inFlight)
	if st.Life.Status == StatusRunning {
		ss.derived.Put(s.ID, &deriveMemo{s: s, l: l, inFlight: mask, st: st})
	} else {
		// Only running sessions step again; an ended one read by a status
		// query must not keep a memo for good.
		ss.derived.Delete(s.ID)
	}
	return ss.forgetEnded(s, st)
}

// memoFor returns the session's memoised state for a lent ledger when it
// shows agent not in flight, whoever else it shows in flight. An agent's own
// state — whether it is due, why not, what it is shown — does not depend on
// the others being in flight (only deciding does), so a step checking it is
// due can use the state its loop launched it from: of four agents launched
// together, only the first would otherwise find the memo's in-flight set
// unchanged.
func (ss *sessions) memoFor(s *Session, l *Ledger, agent string) *State {
	memo, found := ss.derived.Get(s.ID)
	if !found {
		return nil
	}
	if memo.s != s || memo.l != l {
		return nil
	}
	if i := slices.IndexFunc(s.Agents, func(a Agent) bool { return a.ID == agent }); i < 0 || memo.inFlight&(1<<i) != 0 {
		return nil
	}
	return memo.st
}
