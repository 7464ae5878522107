package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// batch is group for reads that many callers make of different rows: a
// call made while no read is in flight is read at once, and the calls made
// while one is in flight go together in the next, one round trip for all.
// Unlike group, each caller waits only as long as its own context allows
// (a status or cancel call must not be held past its deadline by a read
// hung on the database), so the read runs on a goroutine of its own, alive
// while calls are pending, under a context that ends when every caller in
// it has given up or the store closes. The zero value is ready to use; a
// store sets base.
type batch[T any] struct {
	base context.Context // the store's: a read ends when the store closes

	mu      sync.Mutex
	pending []*batchCall[T]
	reading bool // the goroutine runs; pending calls wait for its next read
}

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

// do puts v into the next read and waits for it, or for ctx to end. read
// gets the values in the order called, fills in each one's answer, and
// returns each its error; it must not keep a value past its return. A
// caller that gave up must not touch v again: the read may still fill it.
func (b *batch[T]) do(ctx context.Context, v T, read func(context.Context, []T) []error) error {
	c := &batchCall[T]{v: v, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, c)
	if !b.reading {
		b.reading = true
		go b.run(read)
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

// run reads the pending calls, a group at a time, until none are left.
func (b *batch[T]) run(read func(context.Context, []T) []error) {
	for {
		b.mu.Lock()
		calls := b.pending
		b.pending = nil
		if len(calls) == 0 {
			b.reading = false
			b.mu.Unlock()
			return
		}
		base := b.base
		if base == nil { // a DB made by hand in a test
			base = context.Background()
		}
		ctx, cancel := context.WithCancel(base)
		in := &batchRead{cancel: cancel, waiting: len(calls)}
		for _, c := range calls {
			c.in = in
		}
		b.mu.Unlock()
		b.answer(ctx, calls, read)
		cancel()
	}
}

// answer runs one read and answers its calls. A read that panics answers
// them with an error instead: it runs on the batch's own goroutine, where
// nothing would recover it, and one bad row must not take the replica down.
func (b *batch[T]) answer(ctx context.Context, calls []*batchCall[T], read func(context.Context, []T) []error) {
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
		return read(ctx, vs)
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
