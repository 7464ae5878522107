package coordination

import "time"

// A session whose resume fails every time (an agent's MCP server that will
// not start on these replicas, say) is left interrupted, and every replica
// resuming those would claim it again each time its lease expired: a
// "resumed" event in its timeline and a warning in the log every few
// seconds, for ever. A failed resume waits instead, a minute doubling to
// an hour, before this service tries the session again; a resume that
// starts, or a session taken up elsewhere, forgets the wait.

// Resume backoff: the first retry a minute after the failure, each next one
// twice as late, never more than an hour apart.
const (
	resumeFirst = time.Minute
	resumeMax   = time.Hour
)

// resumeWait is a session's failed resumes: how many, and when the next
// may be tried.
type resumeWait struct {
	fails int
	next  time.Time
}

// resumeDue tells whether session id may be resumed now.
func (svc *Service) resumeDue(id string) bool {
	w, ok := svc.resumeWaits.Get(id)
	return !ok || !svc.now().Before(w.next)
}

// resumeFailed records a failed resume of session id and returns when the
// next may be tried.
func (svc *Service) resumeFailed(id string) time.Time {
	w, _ := svc.resumeWaits.Get(id)
	wait := resumeFirst
	for range w.fails {
		if wait *= 2; wait >= resumeMax {
			wait = resumeMax
			break
		}
	}
	w.fails++
	w.next = svc.now().Add(wait)
	svc.resumeWaits.Put(id, w)
	return w.next
}
