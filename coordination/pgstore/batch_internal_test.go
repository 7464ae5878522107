package pgstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// heldReads is a batch read that records what each read got and waits, at
// its first read, until the test lets it go: the calls made meanwhile pile
// up for the next.
type heldReads struct {
	mu      sync.Mutex
	reads   [][]int
	entered chan struct{} // a read began
	release chan struct{} // closed: reads go on
}

func newHeldReads() *heldReads {
	return &heldReads{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (h *heldReads) read(ctx context.Context, vs []*int) []error {
	got := make([]int, len(vs))
	for i, v := range vs {
		got[i] = *v
	}
	h.mu.Lock()
	h.reads = append(h.reads, got)
	h.mu.Unlock()
	h.entered <- struct{}{}
	errs := make([]error, len(vs))
	select {
	case <-h.release:
	case <-ctx.Done():
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return errs
	}
	for _, v := range vs {
		*v *= 10 // the answer
	}
	return errs
}

func (h *heldReads) seen() [][]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reads)
}

// TestCallsMadeDuringAReadGoTogetherInTheNext: the first call is read at
// once; the calls made while it is in flight are one read after it, in the
// order called, and each gets its own answer.
func TestCallsMadeDuringAReadGoTogetherInTheNext(t *testing.T) {
	var b batch[*int]
	h := newHeldReads()
	ctx := context.Background()
	answers := make(chan [2]int, 4)
	call := func(v int) {
		x := v
		if err := b.do(ctx, &x, h.read); err != nil {
			t.Error(err)
		}
		answers <- [2]int{v, x}
	}
	go call(1)
	<-h.entered
	for v := 2; v <= 4; v++ {
		go call(v)
		await(t, "the calls waiting for the next read", func() bool { return b.waiting() == v-1 })
	}
	close(h.release)
	for range 4 {
		a := <-answers
		if a[1] != a[0]*10 {
			t.Errorf("call %d got %d, want its own answer %d", a[0], a[1], a[0]*10)
		}
	}
	if got := h.seen(); !slices.EqualFunc(got, [][]int{{1}, {2, 3, 4}}, slices.Equal) {
		t.Errorf("reads %v, want [[1] [2 3 4]]: one at once, the three made during it together", got)
	}
	b.mu.Lock()
	reading := b.reading
	b.mu.Unlock()
	if reading {
		t.Error("the batch still reads with no call pending; want its goroutine gone")
	}
}

// TestACallerGivesUpAtItsOwnDeadline: a caller whose context ends while its
// read hangs returns at once with its context's error; one that gave up
// while still pending is left out of the next read; and a read every
// caller gave up is cancelled. The calls after it are read as usual.
func TestACallerGivesUpAtItsOwnDeadline(t *testing.T) {
	var b batch[*int]
	h := newHeldReads()
	first, cancelFirst := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		x := 1
		done <- b.do(first, &x, h.read)
	}()
	<-h.entered
	pendingCtx, cancelPending := context.WithCancel(context.Background())
	pendingDone := make(chan error, 1)
	go func() {
		x := 2
		pendingDone <- b.do(pendingCtx, &x, h.read)
	}()
	await(t, "the call waiting for the next read", func() bool { return b.waiting() == 1 })
	cancelPending()
	if err := <-pendingDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("a pending call whose context ended returned %v, want context.Canceled", err)
	}
	await(t, "no call waiting for the next read", func() bool { return b.waiting() == 0 })
	cancelFirst()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a call whose context ended during its read returned %v, want context.Canceled", err)
	}
	// Its read, which nobody waits for now, is cancelled (the read above
	// returns when its context ends) rather than left hanging.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		b.mu.Lock()
		reading := b.reading
		b.mu.Unlock()
		if !reading {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a read every caller gave up on is still in flight; want it cancelled")
		}
	}
	close(h.release)
	x := 3
	if err := b.do(context.Background(), &x, h.read); err != nil || x != 30 {
		t.Fatalf("a call after those gave up: %d, %v; want 30, nil", x, err)
	}
	if got := h.seen(); !slices.EqualFunc(got, [][]int{{1}, {3}}, slices.Equal) {
		t.Errorf("reads %v, want [[1] [3]]: the call that gave up while pending is in none", got)
	}
}

// TestAReadThatPanicsAnswersItsCallers: a read runs on the batch's own
// goroutine, where nothing else would recover it; a panic there answers
// its callers with an error, and the batch reads on.
func TestAReadThatPanicsAnswersItsCallers(t *testing.T) {
	var b batch[*int]
	x := 1
	err := b.do(context.Background(), &x, func(context.Context, []*int) []error { panic("a bad row") })
	if !errors.Is(err, errBatchReadPanicked) {
		t.Fatalf("a call whose read panicked returned %v, want errBatchReadPanicked", err)
	}
	h := newHeldReads()
	close(h.release)
	if err := b.do(context.Background(), &x, h.read); err != nil || x != 10 {
		t.Fatalf("the next call after a panic: %d, %v; want 10, nil", x, err)
	}
}
