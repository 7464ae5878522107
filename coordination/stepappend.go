package coordination

import "fmt"

// CheckStepAppend is what every store's StepLock.Append checks before it
// writes e as step of agent in session: the lock is still held (not
// released), its one step is not recorded yet, the entry is the lock's
// agent's, and it is a ledger entry (answer, vote or error). One check, so
// the stores refuse alike and say so in the same words.
func CheckStepAppend(session, agent string, step int, released, appended bool, e Entry) error {
	if released {
		return fmt.Errorf("the step lock of agent %q in session %q was released; take a new one to record a step", agent, session)
	}
	if appended {
		return fmt.Errorf("step %d of agent %q in session %q is already recorded; take a new step lock for the next one", step, agent, session)
	}
	if e.Agent != "" && e.Agent != agent {
		return fmt.Errorf("an entry of agent %q cannot be recorded under the step lock of agent %q: %w", e.Agent, agent, ErrBadInput)
	}
	switch e.Kind {
	case KindAnswer, KindVote, KindError:
		return nil
	}
	return fmt.Errorf("entry kind %q is not answer, vote or error: %w", e.Kind, ErrBadInput)
}
