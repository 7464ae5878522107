package coordination

import "sync"

// followTold is what a service's followers of one session have told its
// subscribers: the latest step told of each agent, and whether the run's
// end was. Shared, so two followers here tell each step and the end once,
// whichever reads first; its lock is held across a telling's ledger read,
// which only followers of the same session wait for.
type followTold struct {
	mu    sync.Mutex
	told  map[string]int // nil until a follower that is heard starts it
	ended bool
	refs  int
}

// follow joins session id's followers here; leave ends this one's share.
// Followers whose run has ended are not joined: a follower of a later run
// of the session (resumed after a cancel) starts afresh, or it would tell
// nothing while they are still leaving.
func (rs *runs) follow(id string) (f *followTold, leave func()) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	f, ok := rs.follows[id]
	if !ok || f.over() {
		f = &followTold{}
		rs.follows[id] = f
	}
	f.refs++
	return f, func() {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if f.refs--; f.refs == 0 && rs.follows[id] == f {
			delete(rs.follows, id)
		}
	}
}

// over tells whether the run's end was told.
func (f *followTold) over() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended
}

// start sets where the ledger stands, unless a follower already did.
func (f *followTold) start(read func() map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.told == nil {
		f.told = read()
	}
}

// steps tells what landed since the last telling, once started.
func (f *followTold) steps(tell func(told map[string]int) map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.told != nil && !f.ended {
		f.told = tell(f.told)
	}
}

// end tells the run's end once, once started.
func (f *followTold) end(tell func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.told != nil && !f.ended {
		f.ended = true
		tell()
	}
}
