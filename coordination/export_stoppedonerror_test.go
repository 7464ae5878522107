package coordination

import "context"

// StoppedOnError is stoppedOnError, what a run stopped on an error leaves
// of its session, for the tests of the causes it skips.
func StoppedOnError(ctx context.Context, svc *Service, s *Session, cause error) bool {
	return svc.stoppedOnError(ctx, s, cause)
}
