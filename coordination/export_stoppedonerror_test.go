package coordination

import "context"

// StoppedOnError is stoppedOnError, what a run stopped on an error leaves
// of its session, for the tests of the causes it skips.
func StoppedOnError(svc *Service, ctx context.Context, id string, cause error) bool {
	return svc.stoppedOnError(ctx, id, cause)
}
