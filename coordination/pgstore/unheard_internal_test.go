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
		u.add(doubtedEntry{tenant: "t", id: fmt.Sprint("s", i), kind: coordination.SessionCancelled, at: at})
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
