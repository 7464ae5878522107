//go:build !linux

package supervisor

import (
	"os"
	"os/exec"
	"time"
)

// Command leaves cmd as it is off Linux, which has neither the
// parent-death signal nor child subreapers: a CLI run there is killed by
// its process group, and a command of it that left the group outlives it.
func Command(*exec.Cmd) (*os.File, error) { return nil, nil }

// Started has nothing to read off Linux.
func Started(*exec.Cmd, *os.File) error { return nil }

// Grace bounds how long the server waits for its supervisor.
const Grace = 10 * time.Second

// Name is the argv[0] of a supervisor, which runs only on Linux.
const Name = "massgen-cli-supervisor"
