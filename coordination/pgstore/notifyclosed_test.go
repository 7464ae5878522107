package pgstore

import "testing"

// TestAPermissionChangeInDoubtIsLookedForOnceMoreAtClose: a process that
// closes its store just after a permission change's answer was lost (the
// CLI's approve or status, whose look at the pending asks expires the
// lapsed ones, exits at once) must still tell the other replicas of it
// when it committed. Close ends the look; ended before its first look, it
// told nobody, where notifyInDoubt used to tell them at once.
func TestAPermissionChangeInDoubtIsLookedForOnceMoreAtClose(t *testing.T) {
	l := newLostAnswer(t)
	cut := decisionLost(t, l, "agent-whose-record-was-lost-at-close")
	cut.db.Close()
	l.mustHear(permissionsChanged, "a decision committed with its answer lost, its writer closed at once")
}
