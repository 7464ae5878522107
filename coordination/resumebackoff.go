package coordination

import (
	"context"
	"time"
)

// A session whose resume fails every time (an agent's MCP server that will
// not start on these replicas, say) is left interrupted, and every replica
// resuming those would claim it again each time its lease expired: a
// "resumed" event in its timeline and a warning in the log every few
// seconds, for ever. After a few failures in a row, a replica waits before
// it tries the session again, a minute doubling to an hour. The first
// failures are tried again at the next look, as before: a failure there
// may be passing (a lock row of the dead replica still to expire, a
// conflict with another replica's claim), and a failover must not wait a
// minute for it. A resume that starts forgets the failures; so does a
// session whose agents a run steps has taken steps since the last failure
// (a run elsewhere resumed it, and it was interrupted again: its failures
// here are of another time); another replica's attempt (ErrSessionRunning) leaves
// them.

// Resume backoff: resumeFreeTries failures in a row are tried again at the
// next look; after them the first retry waits resumeFirst, each next one
// twice as long, never more than resumeMax.
const (
	resumeFreeTries = 3
	resumeFirst     = time.Minute
	resumeMax       = time.Hour
)

// resumeWait is a session's failed resumes: how many, and when the next
// may be tried.
type resumeWait struct {
	fails int
	next  time.Time
	steps int // the session's steps at the last failure
}

// resumeDue tells whether session id, which has taken steps() so far (read
// only for a session that failed here before; not known when its setup
// cannot be read, which leaves the wait as it is), may be resumed now.
func (svc *Service) resumeDue(id string, steps func() (int, bool)) bool {
	w, ok := svc.resumeWaits.Get(id)
	if !ok {
		return true
	}
	if n, known := steps(); known && w.steps != n {
		svc.resumeWaits.Delete(id)
		return true
	}
	return !svc.now().Before(w.next)
}

// resumeFailed records a failed resume of session id, which had taken
// steps() (the last count kept when they are not known), and returns when
// the next may be tried.
func (svc *Service) resumeFailed(id string, steps func() (int, bool)) time.Time {
	w, _ := svc.resumeWaits.Get(id)
	if n, known := steps(); known && w.steps != n {
		w = resumeWait{steps: n}
	}
	w.fails++
	w.next = svc.now()
	if w.fails >= resumeFreeTries {
		wait := resumeFirst
		for range w.fails - resumeFreeTries {
			if wait *= 2; wait >= resumeMax {
				wait = resumeMax
				break
			}
		}
		w.next = w.next.Add(wait)
	}
	svc.resumeWaits.Put(id, w)
	return w.next
}

// runSteps is how many steps of session id's ledger l a run could have
// taken: its host agents' are a person's or an outer agent's, taken with or
// without a run, so they say nothing about a resume elsewhere. Not known
// (false) when the setup cannot be read.
func (svc *Service) runSteps(ctx context.Context, id string, l *Ledger) (int, bool) {
	s, err := svc.sessions.get(ctx, id)
	if err != nil {
		return 0, false
	}
	n := 0
	for agent, es := range l.Agents {
		if a, ok := s.Agent(agent); !ok || !a.IsHost() {
			n += len(es)
		}
	}
	return n, true
}

// finishRefused counts a decided session's finish that an error that
// stands refused (a full disk, a statement timeout) as a failed resume of
// it: the run leaves its lease to expire so the session reads interrupted
// (finishDecided), and every replica resuming those would take it up at
// each look and pay for its final call again while the error stands. Its
// steps are what the backoff compares (resumeDue), as a failed start's.
func (svc *Service) finishRefused(ctx context.Context, id string) {
	l, err := svc.store.Ledger(context.WithoutCancel(ctx), id)
	svc.resumeFailed(id, func() (int, bool) {
		if err != nil {
			return 0, false
		}
		return svc.runSteps(ctx, id, l)
	})
}
