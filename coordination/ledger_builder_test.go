package coordination

import (
	"maps"
	"testing"
	"time"
)

// team builds sessions and ledgers by hand for tests of the pure rules.
type team struct {
	t   *testing.T
	s   *Session
	l   *Ledger
	now time.Time
}

func newTeam(t *testing.T, rules Rules, ids ...string) *team {
	t.Helper()
	r, err := rules.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{ID: "t", Task: "What is 2+2?", Rules: r, Seed: 7}
	for _, id := range ids {
		s.Agents = append(s.Agents, Agent{ID: id, Model: "sim"})
	}
	s.Aliases = assignAliases(s.AgentIDs(), s.Seed, AliasesAlphabetical)
	return &team{t: t, s: s, l: &Ledger{Agents: map[string][]Entry{}}, now: time.Unix(1000, 0)}
}

func (b *team) add(e Entry) *Entry {
	b.now = b.now.Add(time.Second)
	e.Step = len(b.l.Agents[e.Agent]) + 1
	e.Time = b.now
	b.l.Agents[e.Agent] = append(b.l.Agents[e.Agent], e)
	completeLedger(b.s, b.l)
	list := b.l.Agents[e.Agent]
	return &list[len(list)-1]
}

func (b *team) seen() map[string]int { return maps.Clone(LatestAnswerSteps(b.l)) }

func (b *team) answer(agent, content string) *Entry {
	return b.add(Entry{Agent: agent, Kind: KindAnswer, Content: content, SeenSteps: b.seen()})
}

// vote casts a vote that saw every answer so far.
func (b *team) vote(agent, target string) *Entry {
	return b.voteSeen(agent, target, b.seen())
}

func (b *team) voteSeen(agent, target string, seen map[string]int) *Entry {
	label := ""
	if es := b.l.Agents[target]; len(es) > 0 {
		for _, e := range es {
			if e.Kind == KindAnswer && e.Step <= seen[target] {
				label = e.Label
			}
		}
	}
	return b.add(Entry{Agent: agent, Kind: KindVote, Target: target, TargetLabel: label, SeenSteps: seen})
}

func (b *team) revote(agent, target string) *Entry {
	e := b.vote(agent, target)
	e.Revote = true
	return e
}

func (b *team) fail(agent string) *Entry {
	return b.add(Entry{Agent: agent, Kind: KindError, Class: "provider", Message: "boom"})
}

func (b *team) session(kind SessionEntryKind, agents ...string) {
	b.l.Session = append(b.l.Session, SessionEntry{Seq: len(b.l.Session) + 1, Kind: kind, Agents: agents})
}

func (b *team) state(inFlight ...string) *State {
	f := map[string]bool{}
	for _, id := range inFlight {
		f[id] = true
	}
	return Derive(b.s, b.l, f)
}

func (b *team) decide(inFlight ...string) Decision { return Decide(b.s, b.state(inFlight...), "") }

// splitVotes is a team of a, b and c with three different answers, each
// agent voting for its own: the votes are split.
func splitVotes(t *testing.T, rules Rules) *team {
	t.Helper()
	b := newTeam(t, rules, "a", "b", "c")
	b.answer("a", "Answer: 1")
	b.answer("b", "Answer: 2")
	b.answer("c", "Answer: 3")
	b.vote("a", "a")
	b.vote("b", "b")
	b.vote("c", "c")
	return b
}
