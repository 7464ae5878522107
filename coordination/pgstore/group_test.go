package pgstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// errWrittenTest is slowWrites' answer to every call it wrote.
var errWrittenTest = errors.New("written by the group's write")

// slowWrites is a group's write that records the values it is given and
// holds each write until let go.
type slowWrites struct {
	mu      sync.Mutex
	written []int
	started chan int      // each write's first value, as it starts
	letGo   chan struct{} // each receive lets one write end
}

func newSlowWrites() *slowWrites {
	return &slowWrites{started: make(chan int, 16), letGo: make(chan struct{})}
}

func (w *slowWrites) write(vs []int) []error {
	w.mu.Lock()
	w.written = append(w.written, vs...)
	w.mu.Unlock()
	w.started <- vs[0]
	<-w.letGo
	errs := make([]error, len(vs))
	for i := range errs {
		errs[i] = errWrittenTest
	}
	return errs
}

func (w *slowWrites) wrote(v int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.written, v)
}

// call makes g.do(ctx, v) on a goroutine of its own and returns its
// answer's channel.
func (w *slowWrites) call(ctx context.Context, g *group[int], v int) <-chan error {
	out := make(chan error, 1)
	go func() { out <- g.do(ctx, v, w.write) }()
	return out
}

// TestACallerWhoseContextEndsWhileQueuedReturnsAndIsNeverWritten: a call
// waiting for the next group behind a write in flight returns its
// context's error once its deadline passes, without waiting for that
// write, and is never written; the call queued beside it is.
func TestACallerWhoseContextEndsWhileQueuedReturnsAndIsNeverWritten(t *testing.T) {
	g := &group[int]{}
	w := newSlowWrites()
	first := w.call(context.Background(), g, 1)
	<-w.started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	gone := w.call(ctx, g, 2)
	stays := w.call(context.Background(), g, 3)
	goneErr, returned := answerWithin(gone, 10*time.Second)
	if !returned {
		t.Error("a queued call whose deadline passed still waited for the write in flight 10 s later")
	}
	w.letGo <- struct{}{}
	if err := <-first; !errors.Is(err, errWrittenTest) {
		t.Fatal(err)
	}
	<-w.started // the next group's write
	w.letGo <- struct{}{}
	if err := <-stays; !errors.Is(err, errWrittenTest) {
		t.Errorf("the call queued beside it returned %v, want its write's answer", err)
	}
	if !returned {
		goneErr = <-gone
	}
	if !errors.Is(goneErr, context.DeadlineExceeded) {
		t.Errorf("the queued call whose deadline passed returned %v, want context.DeadlineExceeded", goneErr)
	}
	if w.wrote(2) {
		t.Error("the call whose context ended while it was queued was written")
	}
}

// TestACallerInAGroupInFlightWaitsForItsAnswer: a call already taken into
// a group being written may be written, so it returns that write's
// answer though its context ends meanwhile.
func TestACallerInAGroupInFlightWaitsForItsAnswer(t *testing.T) {
	g := &group[int]{}
	w := newSlowWrites()
	first := w.call(context.Background(), g, 1)
	<-w.started
	lead := w.call(context.Background(), g, 2)
	await(t, "a call waiting for the next group", func() bool { return g.waiting() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	member := w.call(ctx, g, 3)
	await(t, "two calls waiting for the next group", func() bool { return g.waiting() == 2 })
	w.letGo <- struct{}{}
	<-first
	if v := <-w.started; v != 2 {
		t.Fatalf("the next group's write began with %d, want 2", v)
	}
	cancel()
	w.letGo <- struct{}{}
	for _, c := range []<-chan error{lead, member} {
		if err := <-c; !errors.Is(err, errWrittenTest) {
			t.Errorf("a call of the group written returned %v, want its write's answer", err)
		}
	}
	if !w.wrote(3) {
		t.Error("the call whose context ended while its group was written was not in the write")
	}
}

// TestCallersLeavingTheQueueAsGroupsFormLeakNoLeader: many calls whose
// contexts end at every moment of a group's forming (before they queue,
// while they wait, as a leader hands off) each either leave the queue
// unwritten or are written once and answered; none is left waiting, no
// leader is left counted, and the calls after them are still written.
func TestCallersLeavingTheQueueAsGroupsFormLeakNoLeader(t *testing.T) {
	g := &group[int]{leaders: 2, max: 3}
	var mu sync.Mutex
	times := map[int]int{}
	write := func(vs []int) []error {
		mu.Lock()
		for _, v := range vs {
			times[v]++
		}
		mu.Unlock()
		time.Sleep(50 * time.Microsecond) // long enough for calls to queue
		errs := make([]error, len(vs))
		for i := range errs {
			errs[i] = errWrittenTest
		}
		return errs
	}
	const calls = 2000
	answers := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			// Deadlines from already past to a few writes long.
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%7)*40*time.Microsecond)
			defer cancel()
			answers[i] = g.do(ctx, i, write)
		})
	}
	wg.Wait()
	left := 0
	for i, err := range answers {
		if errors.Is(err, context.DeadlineExceeded) {
			left++
		}
		switch n := times[i]; {
		case errors.Is(err, errWrittenTest) && n != 1:
			t.Errorf("call %d was answered written and written %d times", i, n)
		case errors.Is(err, context.DeadlineExceeded) && n != 0:
			t.Errorf("call %d left the queue, yet was written %d times", i, n)
		case !errors.Is(err, errWrittenTest) && !errors.Is(err, context.DeadlineExceeded):
			t.Errorf("call %d returned %v", i, err)
		}
	}
	t.Logf("%d of %d calls left the queue unwritten", left, calls)
	if n, w := g.waiting(), g.inFlight(); n != 0 || w != 0 {
		t.Fatalf("after every call returned: %d calls waiting, %d writes in flight; want none", n, w)
	}
	// Both leaders free: two calls made now are written, each at once.
	done := make(chan error, 2)
	for v := range 2 {
		go func() { done <- g.do(context.Background(), calls+v, write) }()
	}
	for range 2 {
		if err := <-done; !errors.Is(err, errWrittenTest) {
			t.Errorf("a call after them returned %v, want its write's answer", err)
		}
	}
}
