package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// batch is group for reads that many callers make of different rows: a
// call made while fewer than its readers are reading is read at once, and
// the calls made while they all are go together in the next free one's
// read, one round trip for up to max of them. Several readers, so that one
// slow read (a replica reading whole ledgers after a restart, a connection
// going bad) holds up only the calls in it; a cap, so that no read grows
// with the load. Unlike group, each caller waits only as long as its own
// context allows (a status or cancel call must not be held past its
// deadline by a read hung on the database), so the reads run on goroutines
// of their own, alive while calls are pending, each under a context that
// ends when every caller in it has given up or the store closes. newDB
// sets one up.
type batch[T any] struct {
	base context.Context                    // the store's: a read ends when the store closes
	read func(context.Context, []T) []error // fills in each value's answer, returns each its error
	// readers and max are batchReaders and batchMax unless a test sets
	// them smaller.
	readers, max int

	mu      sync.Mutex
	pending []*batchCall[T]
	reading int // goroutines reading; pending calls wait for the next free one
}

// A batch's bounds: reads at once, and calls a read.
const (
	batchReaders = 4
	batchMax     = 256
)

type batchCall[T any] struct {
	v    T
	err  error
	done chan struct{} // closed once read: err is the answer, v filled
	in   *batchRead    // the read it went into, set when taken; nil while pending
}

// batchRead is one read's context and how many of its callers still wait.
type batchRead struct {
	cancel  context.CancelFunc
	waiting int // under the batch's mu
}

// do puts v into a read and waits for it, or for ctx to end. A caller that
// gave up must not touch v again: the read may still fill it.
func (b *batch[T]) do(ctx context.Context, v T) error {
	c := &batchCall[T]{v: v, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, c)
	if b.reading < cmp.Or(b.readers, batchReaders) {
		b.reading++
		go b.run()
	}
	b.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-c.done: // answered meanwhile: the answer is as good
		return c.err
	default:
	}
	if c.in == nil {
		b.pending = slices.DeleteFunc(b.pending, func(o *batchCall[T]) bool { return o == c })
	} else if c.in.waiting--; c.in.waiting == 0 {
		c.in.cancel() // nobody waits for this read any more
	}
	return ctx.Err()
}

// run reads the pending calls, up to max a read, until none are left.
func (b *batch[T]) run() {
	for {
		b.mu.Lock()
		n := min(len(b.pending), cmp.Or(b.max, batchMax))
		if n == 0 {
			b.reading--
			b.mu.Unlock()
			return
		}
		calls := b.pending[:n:n]
		b.pending = slices.Clone(b.pending[n:])
		ctx, cancel := context.WithCancel(b.base)
		in := &batchRead{cancel: cancel, waiting: len(calls)}
		for _, c := range calls {
			c.in = in
		}
		b.mu.Unlock()
		b.answer(ctx, calls)
		cancel()
	}
}

// answer runs one read and answers its calls. A read that panics answers
// them with an error instead: it runs on the batch's own goroutine, where
// nothing would recover it, and one bad row must not take the replica down.
func (b *batch[T]) answer(ctx context.Context, calls []*batchCall[T]) {
	vs := make([]T, len(calls))
	for i, c := range calls {
		vs[i] = c.v
	}
	errs := func() (errs []error) {
		defer func() {
			if p := recover(); p != nil {
				errs = make([]error, len(calls))
				for i := range errs {
					errs[i] = fmt.Errorf("%w: %v", errBatchReadPanicked, p)
				}
			}
		}()
		return b.read(ctx, vs)
	}()
	for i, c := range calls {
		c.err = errs[i]
		close(c.done)
	}
}

// errBatchReadPanicked answers the calls of a read that panicked.
var errBatchReadPanicked = errors.New("a read grouped with others failed on a bug (it panicked); try again")

// waiting is how many calls wait for the next read (tests).
func (b *batch[T]) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}
