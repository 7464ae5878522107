package main

import (
	"context"
	"errors"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Exit codes. A script tells an agreed answer (0) from one a stop forced
// (5, 6, 7): both print a winner, only one is the team's verdict.
const (
	exitOK           = 0 // the team agreed on a final answer
	exitBadInput     = 1 // bad arguments or config
	exitFailed       = 2 // the run produced no answer at all
	exitDegraded     = 3 // an answer, but fewer than two agents of the team ever answered
	exitCancelled    = 4 // cancelled, interrupted or out of disk space; resumable
	exitLimitForced  = 5 // an answer, not agreed: the budget or the timeout stopped the team first
	exitFailedForced = 6 // an answer, not agreed: agents failed and dropped, leaving no agreement
	exitSplitForced  = 7 // an answer, not agreed: the votes stayed split (split_vote, max_rounds, finalize)
)

// exitCodesHelp is the table `run --help` prints (README says the same).
const exitCodesHelp = `Exit codes:
  0  the team agreed on a final answer (consensus or early agreement)
  1  bad arguments or config
  2  the team produced no answer
  3  degraded: an answer, but fewer than two agents of the team ever answered
  4  cancelled, interrupted or out of disk space (resumable with run --resume)
  5  an answer the team did not agree on: the budget or the timeout stopped it first
  6  an answer the team did not agree on: agents failed and were dropped
  7  an answer the team did not agree on: the votes stayed split (split_vote, max_rounds, finalized)
  5, 6 and 7 print "Not agreed: …" with the spend against the budget and how the answer was taken.`

// forcedExit is the exit code of a finished run whose winner was not agreed
// on, by why it stopped.
func forcedExit(stop coordination.StopReason) int {
	switch stop {
	case coordination.StopBudget, coordination.StopTimeout:
		return exitLimitForced
	case coordination.StopAgentsFailed, coordination.StopSingleAgent:
		return exitFailedForced
	}
	return exitSplitForced
}

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
