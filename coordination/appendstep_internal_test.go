package coordination

import "testing"

// TestAHostsStepLockDoesNotLetGoInTheLanding: a host's step marks its view
// used under the step lock after the append, so its lock must not be one
// that lets go in the append's write (appendStep folds the release for any
// lock that can).
func TestAHostsStepLockDoesNotLetGoInTheLanding(t *testing.T) {
	var l StepLock = &markingLock{}
	if _, ok := l.(ReleasingStepLock); ok {
		t.Fatal("markingLock is a ReleasingStepLock: a host's landing would let its lock go before the view is marked")
	}
}
