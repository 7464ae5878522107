package coordination

import (
	"fmt"
	"time"
)

// The refusals below carry the facts a surface needs to say what to do next
// (which session, who holds it, why a view is stale); the words for that are
// the surface's own (mcp/errors.go names MCP tools, the CLI's exit.go names
// massgen-mcp commands). Each is its sentinel to errors.Is; errors.As reads
// the facts.

// FinishedError refuses work on a session that has ended, or that is decided
// and waits for its final answer. It is ErrSessionFinished.
type FinishedError struct {
	Session string
	Status  string     // StatusFinished, StatusFailed or StatusDecided
	Stop    StopReason // why it ended; "" while decided
	Winner  string     // the winning answer's label, if there is one
}

func (e *FinishedError) Error() string {
	if e.Status == StatusDecided {
		return fmt.Sprintf("%s: %s is decided (%s wins) and waits for its final answer", ErrSessionFinished, e.Session, e.Winner)
	}
	return fmt.Sprintf("%s: %s already ended (%s)", ErrSessionFinished, e.Session, e.Stop)
}

func (e *FinishedError) Unwrap() error { return ErrSessionFinished }

// finishedError is the refusal for a session whose result says it is over.
func finishedError(id string, res *TeamResult) *FinishedError {
	e := &FinishedError{Session: id, Status: res.Status, Stop: Deref(res.StopReason)}
	if res.Winner != nil {
		e.Winner = res.Winner.Label
	}
	return e
}

// RunningError refuses a session whose run another loop holds. It is
// ErrSessionRunning.
type RunningError struct {
	Session string
	// By says who holds the run, as far as the store can tell: a lease's
	// holder ("run-7 (pid 412 on build-1, alive at …)") or where the run
	// lock is held ("a loop in this server").
	By string
}

func (e *RunningError) Error() string {
	return fmt.Sprintf("session %q is being run by %s: %s", e.Session, e.By, ErrSessionRunning)
}

func (e *RunningError) Unwrap() error { return ErrSessionRunning }

// BusyError refuses a step of an agent that has one in flight. It is
// ErrAgentBusy.
type BusyError struct {
	Session, Agent string
	By             string // the step's holder when a lease names one, else ""
}

func (e *BusyError) Error() string {
	if e.By != "" {
		return fmt.Sprintf("agent %q of session %q has a step in flight in %s: %s", e.Agent, e.Session, e.By, ErrAgentBusy)
	}
	return fmt.Sprintf("agent %q of session %q: %s", e.Agent, e.Session, ErrAgentBusy)
}

func (e *BusyError) Unwrap() error { return ErrAgentBusy }

// OtherTeamError refuses a request that names a stored session under
// another team than the one it was created from (Session.TeamName): the
// session would run, or answer with, agents the request did not ask for.
// It is ErrSessionExists.
type OtherTeamError struct {
	Session string
	Team    string // the session's, as it was created
	Asked   string // the request's
}

func (e *OtherTeamError) Error() string {
	return fmt.Sprintf("session %q was created from team %q, not %q: %s", e.Session, e.Team, e.Asked, ErrSessionExists)
}

func (e *OtherTeamError) Unwrap() error { return ErrSessionExists }

// checkTeamName refuses asked for s when both name a team and the names
// differ; a session without a name (written before there were names, or
// created from listed models) or a request naming none is not compared.
func checkTeamName(s *Session, asked string) error {
	if asked == "" || s.TeamName == "" || asked == s.TeamName {
		return nil
	}
	return &OtherTeamError{Session: s.ID, Team: s.TeamName, Asked: asked}
}

// holder words a held lease's owner for RunningError.By and BusyError.By.
// HidePaths hides all but the id from clients that must not see the
// server's processes (holderFacts matches the parenthesis).
func holder(l *RunLease) string {
	return fmt.Sprintf("%s (pid %d on %s, alive at %s)", l.ID, l.PID, l.Host, l.Renewed.Format(time.RFC3339))
}

// StaleWhy says how a host's submission missed the view it must answer.
type StaleWhy int

// How a submission can miss its view.
const (
	ViewMissing   StaleWhy = iota + 1 // the submission names no view
	ViewNotIssued                     // no view was ever issued to the agent
	ViewNotLatest                     // it names a view other than the one last issued
	ViewOutdated                      // a vote on a view a newer answer has superseded
	ViewUsed                          // the view's one submission has landed already
)

// StaleViewError refuses a host's submission that does not answer the
// latest view issued to its agent. It is ErrStaleView.
type StaleViewError struct {
	Agent  string
	Why    StaleWhy
	Landed int // ViewUsed: the step the view's submission landed as
}

func (e *StaleViewError) Error() string {
	var fact string
	switch e.Why {
	case ViewMissing:
		fact = "the submission does not say which view it answers"
	case ViewNotIssued:
		fact = fmt.Sprintf("no view was issued to %s", e.Agent)
	case ViewOutdated:
		fact = "a newer answer landed since the view was issued"
	case ViewUsed:
		fact = fmt.Sprintf("this view was already used: its submission landed as step %d of %s", e.Landed, e.Agent)
	default:
		fact = fmt.Sprintf("it answers a view other than the one last issued to %s", e.Agent)
	}
	return fmt.Sprintf("%s: %s", ErrStaleView, fact)
}

func (e *StaleViewError) Unwrap() error { return ErrStaleView }
