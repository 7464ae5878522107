package coordination

import "context"

// StoppedOnError is stoppedOnError, what a run stopped on an error leaves
// of its session, for the tests of the causes it skips; it tells whether
// the run would release its lease.
func StoppedOnError(ctx context.Context, svc *Service, s *Session, cause error) bool {
	r := &Run{}
	svc.stoppedOnError(ctx, r, s, cause)
	return !r.leaveLease
}
