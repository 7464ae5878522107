package cliagent

import (
	"runtime"
	"sync"

	"golang.org/x/sync/semaphore"
)

// DefaultMaxProcesses is the default bound on CLI processes running at once
// in one server: half the CPUs, at least one. A coding CLI is a heavy
// process (Node or a large native binary, plus the commands it runs).
func DefaultMaxProcesses() int { return max(1, runtime.NumCPU()/2) }

// slots bounds CLI processes across every session of this process: one unit
// per CLI step, held while its CLI runs.
var slots = struct {
	mu sync.Mutex
	w  *semaphore.Weighted
	n  int
}{w: semaphore.NewWeighted(int64(DefaultMaxProcesses())), n: DefaultMaxProcesses()}

// SetMaxProcesses sets how many CLI processes may run at once in this
// process (--max-cli-agents); n < 1 means DefaultMaxProcesses. Call it at
// startup, before any step: steps already waiting keep the old bound.
func SetMaxProcesses(n int) {
	if n < 1 {
		n = DefaultMaxProcesses()
	}
	slots.mu.Lock()
	defer slots.mu.Unlock()
	slots.w, slots.n = semaphore.NewWeighted(int64(n)), n
}

// MaxProcesses is the bound in force.
func MaxProcesses() int {
	slots.mu.Lock()
	defer slots.mu.Unlock()
	return slots.n
}

func sharedSlots() *semaphore.Weighted {
	slots.mu.Lock()
	defer slots.mu.Unlock()
	return slots.w
}
