//go:build !linux

package supervisor

import (
	"os/exec"
	"time"
)

// Command leaves cmd as it is off Linux, which has neither the
// parent-death signal nor child subreapers: a process there is killed by
// its process group, and a command of it that left the group outlives it.
func Command(*exec.Cmd) error { return nil }

// Supervised is false off Linux.
func Supervised(*exec.Cmd) bool { return false }

// Started has nothing to read off Linux.
func Started(*exec.Cmd) error { return nil }

// Stop has nothing to stop off Linux.
func Stop(*exec.Cmd) {}

// Grace bounds how long the server waits for its supervisor.
const Grace = 10 * time.Second

// Name is the argv[0] of a supervisor, which runs only on Linux.
const Name = "massgen-supervisor"
