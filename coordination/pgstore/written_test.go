package pgstore

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestALandingsReleaseDoesNotOverwriteANewerKnownRow: a landing that
// released its lease keeps the released row only over the row it changed;
// a claim of the agent's next step made since (the commit let the lease
// go) is the newer row and stays.
func TestALandingsReleaseDoesNotOverwriteANewerKnownRow(t *testing.T) {
	now := time.Now()
	held := coordination.RunLease{Version: 1, Claimed: now, Renewed: now, Expires: now.Add(time.Minute)}
	released := held
	released.Released = true
	next := coordination.RunLease{Version: 2, Claimed: now.Add(time.Millisecond), Renewed: now, Expires: now.Add(time.Minute)}

	var w written
	w.put("t", "s", "a", held)
	w.replace("t", "s", "a", held, released)
	if got, _ := w.get("t", "s", "a"); !got.Released || got.Version != 1 {
		t.Errorf("after the release the known row is %+v, want version 1 released", got)
	}

	w.put("t", "s", "a", held)
	w.put("t", "s", "a", next) // the next step's claim, after the commit
	w.replace("t", "s", "a", held, released)
	if got, _ := w.get("t", "s", "a"); got.Version != 2 || got.Released {
		t.Errorf("the landing's release overwrote the next claim: known row %+v", got)
	}

	w.drop("t", "s", "a")
	w.replace("t", "s", "a", held, released)
	if got, ok := w.get("t", "s", "a"); !ok || !got.Released {
		t.Errorf("with no row known the release is not kept: %+v, %v", got, ok)
	}
}
