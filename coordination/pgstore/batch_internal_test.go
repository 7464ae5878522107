package pgstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// heldReads is a batch read that records what each read got and waits for
// the test's go-ahead (a token on release, or release closed): the calls
// made meanwhile pile up for the next read.
type heldReads struct {
	mu      sync.Mutex
	reads   [][]int
	entered chan struct{} // a read began
	release chan struct{}
}

func newHeldReads() *heldReads {
	return &heldReads{entered: make(chan struct{}, 16), release: make(chan struct{}, 16)}
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

// oneReader is a batch of h's reads, one at a time.
func oneReader(h *heldReads) *batch[*int] {
	return &batch[*int]{base: context.Background(), read: h.read, readers: 1}
}

func (b *batch[T]) readingNow() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reading
}

// call calls b with v in the background; its answer comes on the channel.
func call(ctx context.Context, b *batch[*int], v int) <-chan [2]any {
	out := make(chan [2]any, 1)
	go func() {
		x := v
		err := b.do(ctx, &x)
		out <- [2]any{x, err}
	}()
	return out
}

// pileUp calls b with 1 and, while h holds that read, with 2 to n, each
// left waiting for a later read; their answers come on the channels.
func pileUp(t *testing.T, ctx context.Context, b *batch[*int], h *heldReads, n int) []<-chan [2]any {
	t.Helper()
	answers := []<-chan [2]any{call(ctx, b, 1)}
	<-h.entered
	for v := 2; v <= n; v++ {
		answers = append(answers, call(ctx, b, v))
		await(t, "the calls waiting for a later read", func() bool { return b.waiting() == v-1 })
	}
	return answers
}

// TestCallsMadeDuringAReadGoTogetherInTheNext: the first call is read at
// once; the calls made while it is in flight are one read after it, in the
// order called, and each gets its own answer.
func TestCallsMadeDuringAReadGoTogetherInTheNext(t *testing.T) {
	h := newHeldReads()
	b := oneReader(h)
	ctx := context.Background()
	answers := pileUp(t, ctx, b, h, 4)
	close(h.release)
	for i, a := range answers {
		if got := <-a; got[0] != (i+1)*10 || got[1] != nil {
			t.Errorf("call %d got %v, want its own answer %d", i+1, got, (i+1)*10)
		}
	}
	if got := h.seen(); !slices.EqualFunc(got, [][]int{{1}, {2, 3, 4}}, slices.Equal) {
		t.Errorf("reads %v, want [[1] [2 3 4]]: one at once, the three made during it together", got)
	}
	await(t, "the reader gone once nothing is pending", func() bool { return b.readingNow() == 0 })
}

// TestAReadTakesAtMostItsCap: calls piled up past a read's cap go in as
// many reads as the cap needs, in the order called; and with readers to
// spare a call is read at once, beside a read in flight.
func TestAReadTakesAtMostItsCap(t *testing.T) {
	h := newHeldReads()
	b := oneReader(h)
	b.max = 2
	ctx := context.Background()
	answers := pileUp(t, ctx, b, h, 6)
	close(h.release)
	for _, a := range answers {
		<-a
	}
	if got := h.seen(); !slices.EqualFunc(got, [][]int{{1}, {2, 3}, {4, 5}, {6}}, slices.Equal) {
		t.Errorf("reads %v, want [[1] [2 3] [4 5] [6]]", got)
	}

	h = newHeldReads()
	b = &batch[*int]{base: context.Background(), read: h.read, readers: 2}
	first := call(ctx, b, 1)
	<-h.entered
	second := call(ctx, b, 2)
	<-h.entered // read beside the first, not after it
	close(h.release)
	<-first
	<-second
	if got := h.seen(); !slices.EqualFunc(got, [][]int{{1}, {2}}, slices.Equal) {
		t.Errorf("reads %v with two readers, want [[1] [2]]", got)
	}
}

// TestACallerGivesUpAtItsOwnDeadline: a caller whose context ends while its
// read hangs returns at once with its context's error, and the read goes on
// for the others in it; one that gave up while still pending is left out
// of the next read; and a read every caller gave up is cancelled. The
// calls after it are read as usual.
func TestACallerGivesUpAtItsOwnDeadline(t *testing.T) {
	h := newHeldReads()
	b := oneReader(h)
	bg := context.Background()
	first := call(bg, b, 1)
	<-h.entered
	pendingCtx, cancelPending := context.WithCancel(bg)
	pending := call(pendingCtx, b, 2)
	hastyCtx, cancelHasty := context.WithCancel(bg)
	hasty := call(hastyCtx, b, 3)
	await(t, "two calls waiting", func() bool { return b.waiting() == 2 })
	cancelPending()
	if got := <-pending; !errors.Is(got[1].(error), context.Canceled) {
		t.Fatalf("a pending call whose context ended returned %v, want context.Canceled", got[1])
	}
	patient := call(bg, b, 4)
	await(t, "hasty and patient waiting", func() bool { return b.waiting() == 2 })
	h.release <- struct{}{} // the first read ends; hasty and patient are the next
	<-first
	<-h.entered
	cancelHasty()
	if got := <-hasty; !errors.Is(got[1].(error), context.Canceled) {
		t.Fatalf("a call whose context ended during its read returned %v, want context.Canceled", got[1])
	}
	h.release <- struct{}{}
	if got := <-patient; got[0] != 40 || got[1] != nil {
		t.Fatalf("the call read with one that gave up: %v, want its answer 40: its read must go on", got)
	}

	// A read every caller gave up on is cancelled (the read returns when
	// its context ends) rather than left hanging.
	lastCtx, cancelLast := context.WithCancel(bg)
	last := call(lastCtx, b, 5)
	<-h.entered
	cancelLast()
	<-last
	await(t, "the read nobody waits for cancelled", func() bool { return b.readingNow() == 0 })
	if got := h.seen(); !slices.EqualFunc(got, [][]int{{1}, {3, 4}, {5}}, slices.Equal) {
		t.Errorf("reads %v, want [[1] [3 4] [5]]: the call that gave up while pending is in none", got)
	}
}

// TestAReadThatPanicsAnswersItsCallers: a read runs on the batch's own
// goroutine, where nothing else would recover it; a panic there answers
// its callers with an error, and the batch reads on.
func TestAReadThatPanicsAnswersItsCallers(t *testing.T) {
	var panicked atomic.Bool
	b := &batch[*int]{base: context.Background(), read: func(_ context.Context, vs []*int) []error {
		if panicked.CompareAndSwap(false, true) {
			panic("a bad row")
		}
		for _, v := range vs {
			*v *= 10
		}
		return make([]error, len(vs))
	}}
	x := 1
	if err := b.do(context.Background(), &x); !errors.Is(err, errBatchReadPanicked) {
		t.Fatalf("a call whose read panicked returned %v, want errBatchReadPanicked", err)
	}
	if err := b.do(context.Background(), &x); err != nil || x != 10 {
		t.Fatalf("the next call after a panic: %d, %v; want 10, nil", x, err)
	}
}
