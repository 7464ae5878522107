package pgstore

import (
	"errors"
	"sync"
)

// group is a group commit: a call made while no write is in flight writes
// at once, and the calls made while one is in flight wait and go together
// in the next. There is no timer and no goroutine of its own: the first
// caller of a group writes it (it leads), then hands the lead to the first
// caller waiting, if any, and returns. So an idle replica writes at once,
// a busy one in as many round trips as it has writes in flight, and
// nothing is left running once the calls have returned. The zero value is
// ready to use.
type group[T any] struct {
	mu      sync.Mutex
	pending []*groupCall[T] // the next group, in the order called
	writing bool            // a leader is writing; the pending wait for it
}

type groupCall[T any] struct {
	v    T
	err  error
	turn chan bool // true: lead the next write; false: written, err is the answer
}

// do adds v to the next write and returns its own answer once written.
// write gets the group's values in the order they were called and returns
// each its error; it runs on the leader's goroutine, so it must not depend
// on one caller's context.
func (g *group[T]) do(v T, write func([]T) []error) error {
	c := &groupCall[T]{v: v, turn: make(chan bool, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	lead := !g.writing
	g.writing = true
	g.mu.Unlock()
	if !lead && !<-c.turn {
		return c.err
	}
	g.mu.Lock()
	calls := g.pending
	g.pending = nil
	g.mu.Unlock()
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
					o.turn <- false
				}
			}
			g.handOff()
		}
	}()
	errs := write(vs)
	for i, o := range calls {
		o.err = errs[i]
		if o != c {
			o.turn <- false
		}
	}
	answered = true
	g.handOff()
	return c.err
}

// errGroupWritePanicked answers the calls of a group whose write panicked.
var errGroupWritePanicked = errors.New("the grouped write panicked; it may or may not have been written")

// handOff gives the lead to the first call waiting, or ends the writing.
func (g *group[T]) handOff() {
	g.mu.Lock()
	if len(g.pending) > 0 {
		g.pending[0].turn <- true
	} else {
		g.writing = false
	}
	g.mu.Unlock()
}

// waiting is how many calls wait for the next write (tests).
func (g *group[T]) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}
