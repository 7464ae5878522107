package coordination

import "testing"

// TestAFollowerOfALaterRunIsNotJoinedToEndedFollowers: a follower that
// joins while the followers of a session's ended run are still leaving (the
// session resumed elsewhere after a cancel) tells the new run's steps and
// end; joined to the ended ones, it told nothing.
func TestAFollowerOfALaterRunIsNotJoinedToEndedFollowers(t *testing.T) {
	rs := newRuns()
	first, leaveFirst := rs.follow("s")
	first.start(func() map[string]int { return map[string]int{"agent_a": 1} })
	first.end(func() {})

	second, leaveSecond := rs.follow("s")
	defer leaveSecond()
	leaveFirst()
	second.start(func() map[string]int { return map[string]int{"agent_a": 1} })
	told := 0
	second.steps(func(m map[string]int) map[string]int { told++; m["agent_a"] = 2; return m })
	if again, leave := rs.follow("s"); again != second {
		t.Fatalf("a follower joining the live one's run got another share")
	} else {
		leave()
	}
	ended := false
	second.end(func() { ended = true })
	if told != 1 || !ended {
		t.Fatalf("the later run's follower told %d step readings and end %v; want 1 and true", told, ended)
	}
}
