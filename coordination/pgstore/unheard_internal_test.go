package pgstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestEntriesInDoubtAreBoundedAndFoundOnce: a replica cut off for long
// keeps unheardMax entries in doubt at most, the newest; a read finds each
// once, and only its own session's.
func TestEntriesInDoubtAreBoundedAndFoundOnce(t *testing.T) {
	var u unheard
	at := time.Now().UTC().Truncate(time.Millisecond)
	for i := range unheardMax + 10 {
		u.add(doubted{tenant: "t", id: fmt.Sprint("s", i), kind: coordination.SessionCancelled, at: at})
	}
	if n := int(u.n.Load()); n != unheardMax || len(u.es) != unheardMax {
		t.Fatalf("%d entries in doubt (%d counted), want %d", len(u.es), n, unheardMax)
	}
	log := []coordination.SessionEntry{{Kind: coordination.SessionCancelled, Time: at}}
	if u.found("t", "s0", log) {
		t.Error("the oldest entry in doubt, dropped at the bound, was found")
	}
	if u.found("other", "s20", log) {
		t.Error("another tenant's read found an entry in doubt")
	}
	if u.found("t", "s20", []coordination.SessionEntry{{Kind: coordination.SessionFinished, Time: at}}) {
		t.Error("an entry of another kind was taken for the one in doubt")
	}
	if !u.found("t", "s20", log) {
		t.Fatal("the entry in doubt was not found in a log holding it")
	}
	if u.found("t", "s20", log) {
		t.Error("an entry in doubt was found twice (told the other replicas twice)")
	}
}

// TestPermissionChangesInDoubtAreLookedForByOneLook: a permission change in
// doubt is found by the replica's look, not by a read of the session's
// log; the first one put in doubt starts the look and the next ones join
// it; one looked for longer than doubtLookFor is dropped, and the look
// ends once none is left.
func TestPermissionChangesInDoubtAreLookedForByOneLook(t *testing.T) {
	var u unheard
	at := time.Now().UTC().Truncate(time.Millisecond)
	rec := []doubtedRecord{{at: at, text: `{"agent":"agent_a"}`}}
	if !u.add(doubted{tenant: "t", id: "s1", records: rec, since: at}) {
		t.Fatal("the first permission change in doubt started no look")
	}
	if u.add(doubted{tenant: "t", id: "s2", records: rec, since: at.Add(doubtLookFor)}) {
		t.Error("a second permission change in doubt started a second look")
	}
	if u.add(doubted{tenant: "t", id: "s3", kind: coordination.SessionCancelled, at: at}) {
		t.Error("a session entry in doubt started a look: its caller's read finds it")
	}
	if u.found("t", "s1", []coordination.SessionEntry{{Kind: coordination.SessionCancelled, Time: at}}) {
		t.Error("a read of the session log found a permission change in doubt")
	}
	looked := u.lookFor(at.Add(doubtLookFor + time.Millisecond))
	if len(looked) != 1 || looked[0].id != "s2" {
		t.Fatalf("looked for %+v past the first one's doubtLookFor, want s2 alone", looked)
	}
	if got := u.drop([]uint64{looked[0].seq}); len(got) != 1 || got[0].change() != (coordination.Change{Permissions: true}) {
		t.Fatalf("dropped %+v, want s2, told as a permissions change", got)
	}
	if looked := u.lookFor(at); len(looked) != 0 || u.looking {
		t.Fatalf("with no permission change left the look goes on (%+v)", looked)
	}
	if int(u.n.Load()) != 1 {
		t.Errorf("%d changes in doubt, want the session entry's", u.n.Load())
	}
}
