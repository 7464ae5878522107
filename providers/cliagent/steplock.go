package cliagent

import (
	"os"

	"github.com/massgen-go/massgen-mcp/internal/lockeddir"
)

// A run's step directory, its peers' files (<step dir>.peers, whole
// copies of the peers' snapshots when unsandboxed) and a sandboxed run's
// HOME and TMPDIR (<step dir>.home and .tmp, freshhome.go) are removed
// when the run ends (workflow.close); a server killed mid-run (SIGKILL, an OOM kill)
// leaves them, in the agent's directory, which every step touches, so the
// idle sweep never takes them. Each run therefore holds a lock on
// <step dir>.lock while they live, and the next run's start removes those
// whose lock is free (internal/lockeddir): another step of the same agent
// in flight in the same directory (or another process's, in a shared
// TMPDIR) is never swept.

const (
	stepPrefix   = "massgen-step-"
	peersSibling = ".peers"
	homeSibling  = ".home"
	tmpSibling   = ".tmp"
)

// stepDir makes a fresh step directory in base (TMPDIR for "") under its
// lock, held until release.
func stepDir(base string) (dir string, lock *os.File, err error) {
	return lockeddir.Make(base, stepPrefix)
}

// releaseStep removes a step directory, its peers' files, its HOME, its
// TMPDIR and its lock, then drops the lock: a sweep that sees the lock
// free finds nothing.
func releaseStep(dir string, lock *os.File) {
	_ = lockeddir.Release(dir, lock, peersSibling, homeSibling, tmpSibling)
}

// sweepSteps removes from base (TMPDIR for "") the step directories,
// peers' files, HOMEs and TMPDIRs of runs whose lock is free: killed
// runs'. A step directory with no lock file (an older build's) goes once
// a week old.
func sweepSteps(base string) {
	lockeddir.Sweep(base, stepPrefix, peersSibling, homeSibling, tmpSibling)
}
