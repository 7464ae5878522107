package coordination

import (
	"slices"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// AgentState is what the ledger says about one agent right now.
type AgentState struct {
	ID      string
	Alias   int     // N of the agent's alias agentN
	Steps   int     // entries written (every one counts towards max_rounds)
	Entries []Entry // the agent's ledger, in step order

	Answers          int    // answers written
	LatestAnswer     *Entry // nil before the first answer
	FirstAnswerAt    time.Time
	LatestDecision   *Entry // latest answer-or-vote entry
	LatestVote       *Entry
	StandingVote     *Entry // the latest decision, if it is a vote that is not stale
	ConsecutiveFails int    // error entries since the latest answer or vote
	Revoted          bool   // has cast its re-vote

	Dropped  bool // max_agent_failures consecutive errors: never acts again
	Capped   bool // max_rounds steps used
	InFlight bool // its step lock is held
	Held     bool // waiting at the round-0 barrier
	Next     bool // due to act
	// Why says why the agent is not due to act (empty when it is).
	Why string
}

// AnswerCapped tells whether the agent may only vote from now on.
func (a *AgentState) answerCapped(r Rules) bool { return a.Answers >= r.MaxAnswersPerAgent }

// Lifecycle is where a session is, from its session entries.
type Lifecycle struct {
	Status   string // running | decided | finished | cancelled | failed
	Decided  *TeamResult
	Finished *TeamResult
	Revote   *SessionEntry // the re-vote request, if any
	// Applied is what applying the winner's pending changes wrote, once
	// it has (Finished then carries it too).
	Applied *workspace.Applied
	// Cancels counts the cancelled entries of the session log. A step and
	// a run remember it when they begin, so a cancel that lands while they
	// go on is a larger count (cancelfence.go), even if a resume followed.
	Cancels int
	// Ends counts the decided and finished entries: with Cancels, what a
	// decision's read of the log held (read, sinceread.go).
	Ends int
	// CancelReason is why the cancel in force was recorded ("" when none
	// is): by request, a run that stopped on an error, a run not started.
	CancelReason string
	// CancelledAt is when the cancel in force was recorded (zero when none
	// is): the first cancelled entry since the last resume, which is when
	// the session stopped. A run stopped here records it itself once its
	// steps have wound down (Run.Cancel, a shutdown, an error); a cancel
	// asked for again later (Cancel records one more over a cancelled
	// session, cancelfence.go) stopped nothing and does not move it. A
	// cancelled session's duration stops there (snapshot).
	CancelledAt time.Time
}

// State is everything derived from a session's ledger plus the set of agents
// with a step in flight. It is a pure function of its inputs.
type State struct {
	Agents   []*AgentState  // team order
	Latest   map[string]int // each agent's latest answer step (0: none)
	Next     []string       // agents due to act, team order
	Settled  bool           // nothing in flight and nobody due to act
	Life     Lifecycle
	Steps    int // entries in the whole ledger
	Round0   bool
	Pending  []string // re-vote: asked and not yet re-voted
	Revoting bool
	spend    ledgerSpend // what the ledger spent (spend.go)
}

// Agent returns an agent's state by real id (nil if none). A team has at
// most MaxAgents agents, so a scan beats building a map on every derivation.
func (st *State) Agent(id string) *AgentState {
	for _, a := range st.Agents {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// AgentByAlias returns an agent's state by the N of its alias (nil if none).
func (st *State) AgentByAlias(n int) *AgentState {
	for _, a := range st.Agents {
		if a.Alias == n {
			return a
		}
	}
	return nil
}

// Live lists the agents that are not dropped.
func (st *State) Live() []*AgentState {
	var out []*AgentState
	for _, a := range st.Agents {
		if !a.Dropped {
			out = append(out, a)
		}
	}
	return out
}

// IsVoteStale applies MassGen's rule: a vote is stale if its seen_steps is
// missing or empty, or some agent's latest answer step is greater than what
// the voter saw (a missing key counts as 0).
func IsVoteStale(vote *Entry, latest map[string]int) bool {
	if len(vote.SeenSteps) == 0 {
		return true
	}
	for agent, step := range latest {
		if step > vote.SeenSteps[agent] {
			return true
		}
	}
	return false
}

// LatestAnswerSteps maps every agent with an entry to the step of its latest
// answer (0 if it has none).
func LatestAnswerSteps(l *Ledger) map[string]int {
	latest := make(map[string]int, len(l.Agents))
	for id, entries := range l.Agents {
		latest[id] = 0
		for i := len(entries) - 1; i >= 0; i-- {
			if entries[i].Kind == KindAnswer {
				latest[id] = entries[i].Step
				break
			}
		}
	}
	return latest
}

// Derive computes the state of a session from its ledger. inFlight names the
// agents whose step lock is held.
func Derive(s *Session, l *Ledger, inFlight map[string]bool) *State {
	r := s.Rules
	st := &State{
		Agents: make([]*AgentState, 0, len(s.Agents)),
		Latest: LatestAnswerSteps(l),
		spend:  spendOf(l),
	}
	states := make([]AgentState, len(s.Agents)) // one allocation for the team
	for _, ag := range s.Agents {
		if _, ok := st.Latest[ag.ID]; !ok {
			st.Latest[ag.ID] = 0
		}
	}
	st.Life = lifecycle(l.Session)
	revote := st.Life.Revote

	for i, ag := range s.Agents {
		a := &states[i]
		*a = AgentState{ID: ag.ID, Alias: s.Aliases[ag.ID], InFlight: inFlight[ag.ID]}
		entries := l.Agents[ag.ID]
		a.Steps, a.Entries = len(entries), entries
		st.Steps += len(entries)
		run := 0
		for i := range entries {
			e := &entries[i]
			switch e.Kind {
			case KindAnswer:
				a.Answers++
				if a.LatestAnswer == nil {
					a.FirstAnswerAt = e.Time
				}
				a.LatestAnswer, a.LatestDecision = e, e
				run = 0
			case KindVote:
				a.LatestVote, a.LatestDecision = e, e
				if e.Revote {
					a.Revoted = true
				}
				run = 0
			case KindError:
				run++
				if run >= r.MaxAgentFailures {
					a.Dropped = true
				}
			}
		}
		a.ConsecutiveFails = run
		if d := a.LatestDecision; d != nil && d.Kind == KindVote && !IsVoteStale(d, st.Latest) {
			a.StandingVote = d
		}
		a.Capped = a.Steps >= r.MaxRounds
		st.Agents = append(st.Agents, a)
	}

	// The round-0 barrier holds agents that have answered while an agent that
	// can still act has no first answer, so every second step sees every first
	// answer. An agent that chose to vote instead (blind_first: false) no
	// longer holds it: the others then get their turn to vote too.
	for _, a := range st.Agents {
		if !a.Dropped && !a.Capped && a.LatestDecision == nil {
			st.Round0 = true
		}
	}

	var asked []string
	if revote != nil {
		st.Revoting = true
		asked = revote.Agents
	}

	anyInFlight := false
	for _, a := range st.Agents {
		anyInFlight = anyInFlight || a.InFlight
		switch {
		case a.Dropped:
			a.Why = "dropped after repeated failures"
		case a.Capped:
			a.Why = "has used all its steps (max_rounds)"
		case a.InFlight:
			a.Why = "has a step in flight"
		case !a.Revoted && slices.Contains(asked, a.ID):
			a.Next = true
			st.Pending = append(st.Pending, a.ID)
		case st.Round0 && a.LatestAnswer != nil:
			a.Held = true
			a.Why = "waits until every agent has a first answer"
		case a.StandingVote != nil:
			a.Why = "has a standing vote"
		default:
			a.Next = true
		}
		if a.Next {
			if st.Next == nil {
				st.Next = make([]string, 0, len(st.Agents)) // sized once: every landing derives
			}
			st.Next = append(st.Next, a.ID)
		}
	}
	if st.Life.Status != StatusRunning {
		for _, a := range st.Agents {
			if a.Next {
				a.Next, a.Why = false, "the session is "+st.Life.Status
			}
		}
		st.Next = nil
	}
	st.Settled = !anyInFlight && len(st.Next) == 0
	return st
}

// FinishedResult is the result a session log's latest finished entry
// records, with the latest apply laid over it, as the session's result
// has it (nil before the session finished): for a store's projection of
// it (the file store's final/).
func FinishedResult(entries []SessionEntry) *TeamResult { return lifecycle(entries).Finished }

// lifecycle reads the session entries: the latest finished/decided result,
// whether a cancel is in force, and the re-vote request.
func lifecycle(entries []SessionEntry) Lifecycle {
	lc := Lifecycle{Status: StatusRunning}
	cancelled := false
	for i := range entries {
		e := &entries[i]
		switch e.Kind {
		case SessionRevote:
			lc.Revote = e
		case SessionDecided:
			lc.Decided = agreedAsNow(e.Result)
			lc.Ends++
		case SessionFinished:
			lc.Finished = agreedAsNow(e.Result)
			lc.Ends++
		case SessionCancelled:
			if !cancelled {
				lc.CancelledAt = e.Time
			}
			cancelled = true
			lc.Cancels++
			lc.CancelReason = e.Reason
		case SessionResumed:
			cancelled = false
			lc.CancelReason, lc.CancelledAt = "", time.Time{}
		case SessionApplied:
			lc.Applied = e.Applied
		}
	}
	if lc.Applied != nil && lc.Finished != nil {
		lc.Finished = withApplied(lc.Finished, lc.Applied)
	}
	switch {
	case lc.Finished != nil:
		lc.Status = lc.Finished.Status
	case lc.Decided != nil:
		lc.Status = StatusDecided
	case cancelled:
		lc.Status = StatusCancelled
	}
	if lc.Status != StatusCancelled {
		lc.CancelReason, lc.CancelledAt = "", time.Time{}
	}
	return lc
}

// sortedIDs returns the ids of the given agents ordered by alias number.
func byAnonOrder(agents []*AgentState) []*AgentState {
	out := slices.Clone(agents)
	slices.SortFunc(out, func(a, b *AgentState) int { return a.Alias - b.Alias }) // not sort.Slice: no reflection, no allocation
	return out
}
