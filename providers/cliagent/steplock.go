package cliagent

import (
	"os"

	"github.com/massgen-go/massgen-mcp/internal/lockeddir"
)

// A run's step directory and its peers' files (<step dir>.peers, whole
// copies of the peers' snapshots when unsandboxed) are removed when the run
// ends (workflow.close); a server killed mid-run (SIGKILL, an OOM kill)
// leaves them, in the agent's directory, which every step touches, so the
// idle sweep never takes them. Each run therefore holds a lock on
// <step dir>.lock while they live, and the next run's start removes those
// whose lock is free (internal/lockeddir): another step of the same agent
// in flight in the same directory (or another process's, in a shared
// TMPDIR) is never swept.

const (
	stepPrefix   = "massgen-step-"
	peersSibling = ".peers"
)

// stepDir makes a fresh step directory in base (TMPDIR for "") under its
// lock, held until release.
func stepDir(base string) (dir string, lock *os.File, err error) {
	return lockeddir.Make(base, stepPrefix)
}

// releaseStep removes a step directory, its peers' files and its lock,
// then drops the lock: a sweep that sees the lock free finds nothing.
func releaseStep(dir string, lock *os.File) { _ = lockeddir.Release(dir, lock, peersSibling) }

// sweepSteps removes from base (TMPDIR for "") the step directories and
// peers' files of runs whose lock is free: killed runs'. A step directory
// with no lock file (an older build's) goes once a week old.
func sweepSteps(base string) { lockeddir.Sweep(base, stepPrefix, peersSibling) }
