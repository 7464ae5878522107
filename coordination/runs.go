package coordination

import (
	"strings"
	"sync"
)

// runs is what runs in this process: the run loops by session, and the
// spend of each session's steps in flight (spend.go). One lock guards both;
// it is never held across a store or a model call.
type runs struct {
	mu     sync.Mutex
	loops  map[string]*Run       // local run loops by session
	spends map[string]*liveSpend // sessions with steps in flight here, and their spend so far
	steps  map[string]int        // server steps in flight here, by session "\x00" agent (stepjoin.go)
	// follows is what this service's followers (follow.go) of each
	// session have told, shared while any follows it.
	follows map[string]*followTold
	closed  bool // Shutdown has begun: no run starts
	// going counts the run goroutines not yet done: a run leaves loops
	// before its last writes (its lease's release, its questions closed),
	// which Shutdown waits for too, so none follows it. Added to under mu
	// while not closed, so Shutdown's wait comes after every Add.
	going sync.WaitGroup
}

// shut tells whether Shutdown has begun.
func (r *runs) shut() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

func newRuns() *runs {
	return &runs{loops: map[string]*Run{}, spends: map[string]*liveSpend{}, steps: map[string]int{}, follows: map[string]*followTold{}}
}

// stepping records a server step of agent in flight here until the
// returned func is called.
func (rs *runs) stepping(id, agent string) func() {
	key := id + "\x00" + agent
	rs.mu.Lock()
	rs.steps[key]++
	rs.mu.Unlock()
	return func() {
		rs.mu.Lock()
		if rs.steps[key]--; rs.steps[key] <= 0 {
			delete(rs.steps, key)
		}
		rs.mu.Unlock()
	}
}

// steppingHere tells whether agent has a server step in flight here.
func (rs *runs) steppingHere(id, agent string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.steps[id+"\x00"+agent] > 0
}

// steppingSession tells whether any agent of the session has a server step
// in flight here.
func (rs *runs) steppingSession(id string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for key := range rs.steps {
		if strings.HasPrefix(key, id+"\x00") {
			return true
		}
	}
	return false
}

// get returns the local run of a session, if any.
func (rs *runs) get(id string) (*Run, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.loops[id]
	return r, ok
}

// remove forgets a run that ended.
func (rs *runs) remove(id string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.loops, id)
}

// all returns the runs running now.
func (rs *runs) all() []*Run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	all := make([]*Run, 0, len(rs.loops))
	for _, r := range rs.loops {
		all = append(all, r)
	}
	return all
}

// count is the number of run loops running now.
func (rs *runs) count() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.loops)
}
