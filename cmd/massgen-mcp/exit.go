package main

import (
	"context"
	"errors"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Exit codes.
const (
	exitOK        = 0 // a final answer was produced
	exitBadInput  = 1 // bad arguments or config
	exitFailed    = 2 // the run produced no answer at all
	exitDegraded  = 3 // an answer, but fewer than two agents of the team ever answered
	exitCancelled = 4 // cancelled, interrupted or out of disk space; resumable
)

// exitError carries an exit code for an outcome that is not a Go error in
// itself (a failed or cancelled session).
type exitError struct {
	code    int
	msg     string
	printed bool // the outcome was already printed; say nothing more
}

func (e *exitError) Error() string { return e.msg }

// exitCode maps any error to the command's exit code, in one place.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled), errors.Is(err, coordination.ErrDiskFull):
		return exitCancelled
	}
	// Everything else — bad input, specs and settings, a session that is
	// missing, exists, runs or has finished — is the caller's to fix.
	return exitBadInput
}
