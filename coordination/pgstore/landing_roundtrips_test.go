package pgstore

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// The landing's round trips: a step's append is one pipelined transaction
// (the fence, the writes, the notification), and the landing the service
// makes lets the step lock go in it too.

// newAnswer is an unnumbered answer of agent, with usage.
func newAnswer(agent, content string) coordination.Entry {
	return coordination.Entry{Agent: agent, Kind: coordination.KindAnswer, Content: content, Usage: providers.Usage{Input: 10, Output: 5}}
}

// cutOnce is cutAfter that cuts one connection, the first to send mark
// while armed (shared by the pool's connections): a retry goes through.
type cutOnce struct {
	*cutAfter
	armed *atomic.Bool
}

func (c *cutOnce) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.mark) && c.armed.CompareAndSwap(true, false) {
		defer c.cut.Store(true)
	}
	return c.Conn.Write(p)
}

// rows counts a table's rows of session s.
func rows(t *testing.T, st *Store, table string) int {
	t.Helper()
	var n int
	if err := st.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE tenant = $1 AND session_id = 's'`, st.tenant).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// stepLockToken is the token of agent_a's step lock row in session s, ""
// for none.
func stepLockToken(t *testing.T, st *Store) string {
	t.Helper()
	var tok string
	err := st.db.pool.QueryRow(context.Background(), `SELECT coalesce(max(token), '') FROM locks WHERE tenant = $1 AND session_id = 's' AND name = 'step:agent_a'`, st.tenant).Scan(&tok)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestAStepLandsInThreeRoundTrips: a step's lock with its number (one,
// pipelined), its fenced append (one: the fence, the answer number and the
// writes in one implicit transaction) and its release (one); landed with
// AppendAndRelease, as the service lands a server step, the release goes
// with the append: two.
func TestAStepLandsInThreeRoundTrips(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	landStep(t, a, "s", "agent_a", "warm") // the statements are prepared once
	before := c.Count()
	landStep(t, a, "s", "agent_a", "counted")
	if n := c.Count() - before; n != 3 {
		t.Errorf("a step's lock, append and release took %d round trips, want 3", n)
	}

	before = c.Count()
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "released with it"})
	if err != nil {
		t.Fatal(err)
	}
	l.Release() // already let go: no round trip
	if n := c.Count() - before; n != 2 {
		t.Errorf("a step's lock and its append with the release took %d round trips, want 2", n)
	}
	if got.Step != 3 || got.AnswerNum != 3 {
		t.Errorf("the appended entry is step %d, answer %d; want step 3, answer 3", got.Step, got.AnswerNum)
	}
	lg, err := a.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	es := lg.Agents["agent_a"]
	if len(es) != 3 {
		t.Fatalf("agent_a's entries %+v; want three", es)
	}
	for i, e := range es {
		if e.Step != i+1 || e.AnswerNum != i+1 {
			t.Errorf("agent_a's entry %d is step %d, answer %d; want %d and %d", i, e.Step, e.AnswerNum, i+1, i+1)
		}
	}
	// An answer given its number keeps it; a vote has none.
	l, err = a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if got, err = l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: `"answer_number":1`, AnswerNum: 7}); err != nil || got.AnswerNum != 7 {
		t.Errorf("an answer numbered 7 appended as %+v, %v; want answer 7", got, err)
	}
	l.Release()
	l, err = a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if got, err = l.Append(ctx, coordination.Entry{Kind: coordination.KindVote, Target: "agent_a"}); err != nil || got.AnswerNum != 0 {
		t.Errorf("a vote appended as %+v, %v; want no answer number", got, err)
	}
	l.Release()
	if lg, err = a.Ledger(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if es := lg.Agents["agent_a"]; len(es) != 5 || es[3].AnswerNum != 7 || es[3].Content != `"answer_number":1` || es[4].AnswerNum != 0 {
		t.Errorf("agent_a's entries %+v; want the fourth answer 7 with its content as written, the fifth a vote", es)
	}
}

// TestAnAnswerInItsContentIsNumberedRight: the answer number the landing
// fills in goes where json.Marshal puts it, not into a content that looks
// like one.
func TestAnAnswerInItsContentIsNumberedRight(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	content := `{"answer_number":1} "answer_number":1, \"answer_number\":1`
	for i := range 2 {
		l, err := a.LockStep(ctx, "s", "agent_a")
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: content, Label: "x"})
		if err != nil || got.AnswerNum != i+1 || got.Content != content {
			t.Fatalf("answer %d appended as %+v, %v", i+1, got, err)
		}
	}
	lg, err := a.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range lg.Agents["agent_a"] {
		if e.AnswerNum != i+1 || e.Content != content || e.Label != "x" {
			t.Errorf("stored answer %d: %+v", i+1, e)
		}
	}
}

// TestAppendAndReleaseLetsTheLockGo: the landing's transaction deletes the
// step lock's row, the agent can step again at once, and the heartbeat
// does not put the row back (the token is no longer held).
func TestAppendAndReleaseLetsTheLockGo(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, newAnswer("agent_a", "done")); err != nil {
		t.Fatal(err)
	}
	if tok := stepLockToken(t, a); tok != "" {
		t.Errorf("after AppendAndRelease the step lock's row is still there (%s)", tok)
	}
	for _, rows := range a.db.held.snapshot() {
		if _, ok := rows[l.(*stepLock).token]; ok {
			t.Error("after AppendAndRelease the heartbeat still renews the step lock")
		}
	}
	if err := a.db.renew(ctx, a.tenant, map[string]heldRow{l.(*stepLock).token: {session: "s", name: "step:agent_a", taken: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if tok := stepLockToken(t, a); tok != "" {
		t.Error("a heartbeat that read the lock as held before the landing put its row back")
	}
	if _, err := l.Append(ctx, newAnswer("agent_a", "again")); err == nil {
		t.Error("an append under a lock let go by AppendAndRelease went through")
	}
	l2, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatalf("the agent after AppendAndRelease: %v; want it free", err)
	}
	defer l2.Release()
	if l2.Step() != 2 {
		t.Errorf("the next step is %d, want 2", l2.Step())
	}
}

// TestALandingFencedOutWritesNothing: a step lock another replica took
// over refuses the landing in its one round trip, and nothing of it is
// written: no entry, no usage, and the other replica's lock stays; the
// lock, still this replica's to let go, is held again.
func TestALandingFencedOutWritesNothing(t *testing.T) {
	for _, release := range []bool{false, true} {
		a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
		ctx := context.Background()
		if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
			t.Fatal(err)
		}
		l, err := a.LockStep(ctx, "s", "agent_a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.db.pool.Exec(ctx, `UPDATE locks SET token = 'another replica' WHERE tenant = $1 AND name = 'step:agent_a'`, a.tenant); err != nil {
			t.Fatal(err)
		}
		e := newAnswer("agent_a", "late")
		e.Usage.Input = 10
		if release {
			_, err = l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, e)
		} else {
			_, err = l.Append(ctx, e)
		}
		if !errors.Is(err, coordination.ErrLeaseLost) {
			t.Errorf("release %v: a landing under a lock taken over = %v, want ErrLeaseLost", release, err)
		}
		if n, u := rows(t, a, "entries"), rows(t, a, "usage"); n != 0 || u != 0 {
			t.Errorf("release %v: a fenced landing wrote %d entries and %d usage rows", release, n, u)
		}
		if tok := stepLockToken(t, a); tok != "another replica" {
			t.Errorf("release %v: the step lock's row is %q's, want the other replica's", release, tok)
		}
		if _, ok := a.db.held.snapshot()[a.tenant][l.(*stepLock).token]; !ok {
			t.Errorf("release %v: a lock whose landing failed is no longer held by the heartbeat", release)
		}
		l.Release()
	}
}

// TestALandingTakesBackALostLockButNotALandedStep: a lock row the database
// lost is taken back by the landing, as the heartbeat would; but a step
// another replica landed meanwhile is refused by the ledger's key, and the
// taken-back row goes with the aborted transaction.
func TestALandingTakesBackALostLockButNotALandedStep(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	lost := func() {
		if _, err := a.db.pool.Exec(ctx, `DELETE FROM locks WHERE tenant = $1`, a.tenant); err != nil {
			t.Fatal(err)
		}
	}
	lost()
	if _, err := l.Append(ctx, newAnswer("agent_a", "one")); err != nil {
		t.Fatalf("a landing whose lock row the database lost: %v; want it taken back", err)
	}
	if tok := stepLockToken(t, a); tok != l.(*stepLock).token {
		t.Errorf("the lost step lock's row is %q's after the landing, want it taken back", tok)
	}
	l.Release()

	l, err = a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	lost()
	// Another holder lands step 2 meanwhile (its own lock since let go).
	other, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Append(ctx, newAnswer("agent_a", "other")); err != nil {
		t.Fatal(err)
	}
	other.Release()
	_, err = l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, newAnswer("agent_a", "mine"))
	if !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("landing a step another replica landed = %v, want ErrLeaseLost", err)
	}
	if tok := stepLockToken(t, a); tok != "" {
		t.Errorf("the refused landing left a lock row (%s); want the taken-back row rolled back", tok)
	}
	if n := rows(t, a, "entries"); n != 2 {
		t.Errorf("%d entries stored, want 2", n)
	}
	l.Release()
}

// TestALandingLostAtItsCommitIsFoundOnRetry: an AppendAndRelease whose
// connection was cut after its commit (the step landed, the lock row
// deleted) is unavailable; the lock is held again, and its retry finds the
// identical stored entry: that landing, not another replica's.
func TestALandingLostAtItsCommitIsFoundOnRetry(t *testing.T) {
	a, cut := cutAtCommit(t, "landed once")
	landed := func() bool { return rows(t, a, "entries") > 0 }
	ctx := context.Background()
	l, err := cut.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	e := newAnswer("agent_a", "landed once")
	e.Time = time.Now() // as the service sets it, once for every try
	if _, err := l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, e); !unavailable(err) {
		t.Fatalf("AppendAndRelease over a connection lost after its commit = %v; want the database unavailable", err)
	}
	if !landed() {
		t.Fatal("the cut landing did not commit, which tests nothing")
	}
	if _, ok := cut.db.held.snapshot()[cut.tenant][l.(*stepLock).token]; !ok {
		t.Error("a lock whose landing's answer was lost is not held again")
	}
	got, err := l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, e)
	if err != nil {
		t.Fatalf("the retry of a landing lost at its commit: %v; want the stored entry found", err)
	}
	if got.Step != 1 || got.AnswerNum != 1 {
		t.Errorf("the retry returned step %d, answer %d; want 1 and 1", got.Step, got.AnswerNum)
	}
	if tok := stepLockToken(t, a); tok != "" {
		t.Errorf("after the retry the step lock's row is still there (%s)", tok)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Errorf("%d entries stored, want 1", n)
	}
}
