package coordination

import "testing"

// answeredThenAVotes is a team of a, b and c that each answered, then a
// voted for itself, and the state a's landing left (b and c in flight).
func answeredThenAVotes(t *testing.T) (*team, *State) {
	b := newTeam(t, Rules{}, "a", "b", "c")
	for _, id := range []string{"a", "b", "c"} {
		b.answer(id, "Answer: 4")
	}
	b.vote("a", "a")
	return b, b.state("b", "c")
}

// TestVoteProgressCountsResultsInTheOrderTheLoopGetsThem: a's vote lands
// before b's, but b's result reaches the loop first. b's line counts b alone
// (a's step is still in flight as the loop sees it); a's line then counts a
// and b, although the state a's landing left holds no vote of b's; c's
// counts all three. Counting from each landing's own state read "1, 1, 3"
// (TestRunProgressCountsVotesAsTheyLanded failed 1 run in 10 so).
func TestVoteProgressCountsResultsInTheOrderTheLoopGetsThem(t *testing.T) {
	b, afterA := answeredThenAVotes(t)
	b.vote("b", "a")
	afterB := b.state("c")
	b.vote("c", "a")
	afterC := b.state()

	r := &Run{}
	own := map[string]bool{"a": true, "b": true, "c": true}
	count := func(voter string, st *State) int {
		delete(own, voter)
		_, n := votesFor(st, r.landed(st), voter, r.counted(own))
		return n
	}
	if n := count("b", afterB); n != 1 {
		t.Fatalf("b's result comes first, a's step still in flight: %d of 3, want 1", n)
	}
	if n := count("a", afterA); n != 2 {
		t.Fatalf("a's result comes second, after b's: %d of 3, want 2", n)
	}
	if r.newest != afterB {
		t.Fatal("the run keeps the newest state it has seen, not the last one it got")
	}
	if n := count("c", afterC); n != 3 {
		t.Fatalf("c's result comes last: %d of 3, want 3", n)
	}
}

// TestVoteProgressOfAVoteStaleInTheNewestStateCountsFromItsOwn: a votes,
// then b answers again, and b's result reaches the loop first. In the
// newest state a's vote no longer stands; its line counts from the state
// its own landing left, where it did: "1 of 3", not "0 of 3".
func TestVoteProgressOfAVoteStaleInTheNewestStateCountsFromItsOwn(t *testing.T) {
	b, afterA := answeredThenAVotes(t)
	b.answer("b", "Answer: 5")
	afterB := b.state("a", "c")

	r := &Run{}
	own := map[string]bool{"a": true, "b": true, "c": true}
	delete(own, "b")
	r.landed(afterB)
	delete(own, "a")
	if _, n := votesFor(afterA, r.landed(afterA), "a", r.counted(own)); n != 1 {
		t.Fatalf("a's vote, stale only in the newest state: %d of 3, want 1", n)
	}
}
