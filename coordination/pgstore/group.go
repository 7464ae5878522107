package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// group is a group commit: a call made while fewer than leaders writes are
// in flight writes at once, and the calls made while they are all in
// flight wait and go together in the next. There is no timer and no
// goroutine of its own: the first caller of a group writes it (it leads),
// then hands the lead to the first caller waiting, if any, with the calls
// waiting behind it (max of them at most), and returns. So an idle replica
// writes at once, a busy one in as many round trips as it has writes in
// flight, and nothing is left running once the calls have returned. The
// zero value is ready to use: one write in flight, no bound on a group.
type group[T any] struct {
	// leaders is how many writes may be in flight at once (0: one); max
	// bounds a group's calls (0: no bound). Set before the first call.
	leaders, max int

	mu      sync.Mutex
	pending []*groupCall[T] // the next groups, in the order called
	writing int             // leaders writing; while all lead, the pending wait
}

type groupCall[T any] struct {
	v    T
	err  error
	turn chan []*groupCall[T] // a group: lead its write; nil: written, err is the answer
}

// do adds v to the next write and returns its own answer once written.
// write gets the group's values in the order they were called and returns
// each its error; it runs on the leader's goroutine, so it must not depend
// on one caller's context. A call whose ctx ends while it waits for the
// next group returns ctx's error at once, wrapped in errNotSent, and is
// never written; one already taken into a group may be written, so it
// waits for that group's answer (wait).
func (g *group[T]) do(ctx context.Context, v T, write func([]T) []error) error {
	c := &groupCall[T]{v: v, turn: make(chan []*groupCall[T], 1)}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	var calls []*groupCall[T]
	if g.writing < cmp.Or(g.leaders, 1) {
		// Nothing waits while a leader is free (each hands its successor
		// the waiting calls as it ends): this group is c alone.
		g.writing++
		calls = g.takeLocked()
	}
	g.mu.Unlock()
	if calls == nil {
		if calls = g.wait(ctx, c); calls == nil {
			return c.err
		}
	}
	vs := make([]T, len(calls))
	for i, o := range calls {
		vs[i] = o.v
	}
	answered := false
	defer func() {
		if !answered {
			// write panicked: its callers and the next leader must not
			// wait for ever (a recovered panic leaves the process up).
			for _, o := range calls {
				if o != c {
					o.err = errGroupWritePanicked
					o.turn <- nil
				}
			}
			g.handOff()
		}
	}()
	errs := write(vs)
	for i, o := range calls {
		o.err = errs[i]
		if o != c {
			o.turn <- nil
		}
	}
	answered = true
	g.handOff()
	return c.err
}

// wait waits for c's turn: its group to lead, or nil once c.err is its
// answer. A c still waiting when ctx ends leaves the calls waiting, under
// the mutex every group is taken under, so no group takes it after.
func (g *group[T]) wait(ctx context.Context, c *groupCall[T]) []*groupCall[T] {
	select {
	case calls := <-c.turn:
		return calls
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(g.pending, c); i >= 0 {
		g.pending = slices.Delete(g.pending, i, i+1)
		g.mu.Unlock()
		c.err = fmt.Errorf("%w: %w", errNotSent, ctx.Err())
		return nil
	}
	g.mu.Unlock()
	// Taken into a group: to lead it, or in one being written.
	return <-c.turn
}

// takeLocked takes the next group off the pending calls, the first of
// them first (its leader).
func (g *group[T]) takeLocked() []*groupCall[T] {
	n := len(g.pending)
	if g.max > 0 {
		n = min(n, g.max)
	}
	calls := g.pending[:n:n]
	g.pending = slices.Clone(g.pending[n:])
	return calls
}

// errNotSent answers a call whose context ended while it waited for the
// next group: nothing of it was sent, so its caller has nothing to take
// back.
var errNotSent = errors.New("it was given up while it waited for the writes in flight ahead of it, and nothing of it was sent")

// errGroupWritePanicked answers the calls of a group whose write panicked.
var errGroupWritePanicked = errors.New("the grouped write panicked; it may or may not have been written")

// handOff gives the lead to the first call waiting, with the next group,
// or ends this leader's writing.
func (g *group[T]) handOff() {
	g.mu.Lock()
	if len(g.pending) > 0 {
		calls := g.takeLocked()
		calls[0].turn <- calls
	} else {
		g.writing--
	}
	g.mu.Unlock()
}

// waiting is how many calls wait for the next write (tests).
func (g *group[T]) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// inFlight is how many writes are in flight (tests).
func (g *group[T]) inFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.writing
}
