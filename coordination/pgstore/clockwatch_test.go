package pgstore

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// A serving replica whose clock drifts off the database's after Open is
// warned, once while it stays off, saying which way, by how much and what
// to sync; told when it is back within; and warned again if it goes off
// again. A reading command (Existing) is not watched, and Close stops the
// watch (it waits for it).
func TestAClockThatDriftsOffAfterOpenIsWarnedOfOnceAndItsReturnTold(t *testing.T) {
	defer func(every time.Duration) { clockCheckEvery = every }(clockCheckEvery)
	clockCheckEvery = 20 * time.Millisecond
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	served, read := &coordtest.SyncBuffer{}, &coordtest.SyncBuffer{}
	db, err := Open(ctx, dsn, Options{clock: clock, Logger: zerolog.New(served)})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := Open(ctx, dsn, Options{clock: clock, Logger: zerolog.New(read), Existing: true})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	defer reader.Close()

	// lines are the log's lines holding s.
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(served.String(), "\n") {
			if strings.Contains(l, s) {
				out = append(out, l)
			}
		}
		return out
	}
	waitFor := func(s string, n int) []string {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(lines(s)) < n; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q logged %d times in 10 s; the log:\n%s", s, n, served.String())
			}
		}
		return lines(s)
	}
	const off, back = "the database's (give or take", "clock is back within"

	skew.Store(int64(2 * time.Second))
	warned := waitFor(off, 1)[0]
	for _, want := range []string{`"level":"warn"`, "ahead of the database's", "within 500ms", "sync this machine's clock", "a run this replica stops holding reads running"} {
		if !strings.Contains(warned, want) {
			t.Errorf("the warning does not say %q: %s", want, warned)
		}
	}
	time.Sleep(10 * clockCheckEvery)
	if n := len(lines(off)); n != 1 {
		t.Errorf("a clock that stayed off was warned of %d times; want once:\n%s", n, served.String())
	}

	skew.Store(0)
	if told := waitFor(back, 1)[0]; !strings.Contains(told, `"level":"info"`) {
		t.Errorf("the clock's return is not an info line: %s", told)
	}
	time.Sleep(10 * clockCheckEvery)
	if n := len(lines(back)); n != 1 {
		t.Errorf("a clock back within was told of %d times; want once:\n%s", n, served.String())
	}

	skew.Store(int64(-2 * time.Second))
	if again := waitFor(off, 2)[1]; !strings.Contains(again, "behind the database's") || !strings.Contains(again, "take them over") {
		t.Errorf("a clock gone off again, behind, is warned: %s", again)
	}
	db.Close() // returns only once the watch has stopped

	if strings.Contains(read.String(), "clock") {
		t.Errorf("a reading command's clock was watched:\n%s", read.String())
	}
}
