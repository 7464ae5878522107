package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// Exit codes. A script tells an agreed answer (0) from one a stop forced
// (5, 6, 7): both print a winner, only one is the team's verdict.
const (
	exitOK           = 0 // the team agreed on a final answer
	exitBadInput     = 1 // bad arguments or config; a refused apply (run --apply's too)
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
  1  bad arguments or config, or run --apply's apply refused (nothing written; apply <session-id> goes on)
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

// errorText is what the command prints for err: its sentence and, for an
// error the user can act on, a line saying what to do next.
func errorText(err error) string {
	if fix := errorFix(err); fix != "" {
		return err.Error() + "\nTo fix: " + fix
	}
	return err.Error()
}

// errorFix says what to do about err at the command line, in one place. The
// core's errors carry the facts (which session, who holds it); the words are
// the CLI's own, its commands and flags, never the MCP tools that
// mcp/errors.go names for the same errors.
func errorFix(err error) string {
	var (
		running *coordination.RunningError
		busy    *coordination.BusyError
		ended   *coordination.FinishedError
		placed  *storeError
		noTeam  *noTeamError
		file    *flagFileError
	)
	// Where the command looked (storeAt.wrap): a PostgreSQL store's sessions
	// are followed, resumed and listed otherwise than the file store's.
	var at storeAt
	id := ""
	if errors.As(err, &placed) {
		at, id = placed.at, placed.id
	}
	switch {
	case errors.As(err, &noTeam):
		return noTeam.fix()
	case errors.As(err, &file):
		return file.fix()
	case errors.As(err, &running) && at.postgres():
		return fmt.Sprintf("follow it in its servers' web view (/ui/) or with team_status, or stop it with massgen-mcp cancel%s %s; a stopped session continues with %s.", at.flags, running.Session, at.place(running.Session).Resume(running.Session))
	case errors.As(err, &running):
		return fmt.Sprintf("follow it with massgen-mcp status --watch%s %s, or stop it with massgen-mcp cancel%s %s; a stopped session continues with %s.", at.flags, running.Session, at.flags, running.Session, at.resume(running.Session))
	case errors.As(err, &busy):
		return fmt.Sprintf("wait for that step to land (massgen-mcp status%s %s shows the agents in flight), then try again.", at.flags, busy.Session)
	case errors.As(err, &ended) && ended.Status == coordination.StatusDecided && at.postgres():
		return fmt.Sprintf("%s writes its final answer; massgen-mcp status%s %s shows the winner.", at.place(ended.Session).Resume(ended.Session), at.flags, ended.Session)
	case errors.As(err, &ended) && ended.Status == coordination.StatusDecided:
		return fmt.Sprintf("%s writes its final answer; massgen-mcp status%s %s shows the winner.", at.resume(ended.Session), at.flags, ended.Session)
	case errors.As(err, &ended):
		return fmt.Sprintf("massgen-mcp status%s %s shows its result; start a new run to work on the task again.", at.flags, ended.Session)
	case errors.Is(err, coordination.ErrSessionFinished):
		return fmt.Sprintf("massgen-mcp status%s %s shows its result; start a new run to work on the task again.", at.flags, cmp.Or(id, "<session-id>"))
	case errors.Is(err, coordination.ErrSessionNotFound):
		return at.notFoundFix(id)
	case errors.Is(err, coordination.ErrSessionExists):
		return fmt.Sprintf("choose another --session-id (or leave it out for a generated one), or continue that session with %s.", at.resume("<session-id>"))
	case errors.Is(err, coordination.ErrSessionStarted):
		return "criteria are attached before a session's first step; give them to a new run instead: massgen-mcp run --criteria FILE (or auto)."
	case errors.As(err, new(*coordination.ApplyConflictError)):
		return fmt.Sprintf("nothing was written. Put the listed files back as the run read them (or decide they should go) and run massgen-mcp apply%s %s again, or run the team again on the project as it is now.", at.flags, cmp.Or(id, "<session-id>"))
	case errors.As(err, new(*coordination.ConfigHeldError)):
		return fmt.Sprintf("nothing was written. Read each listed file in the winner's files (massgen-mcp status%s %s names them); if the task asked for it, massgen-mcp apply --include-config%s %s writes it with the rest, else massgen-mcp apply --skip-config%s %s writes the rest without it.", at.flags, cmp.Or(id, "<session-id>"), at.flags, cmp.Or(id, "<session-id>"), at.flags, cmp.Or(id, "<session-id>"))
	case errors.Is(err, coordination.ErrNothingToApply):
		return fmt.Sprintf("massgen-mcp status%s %s shows the session: changes can be applied once it has finished with a winner that changed files of a --context-path DIR:write.", at.flags, cmp.Or(id, "<session-id>"))
	case errors.Is(err, permissions.ErrNoRequest):
		return fmt.Sprintf("massgen-mcp status%s %s lists the asks still waiting, each with the command that answers it.", at.flags, cmp.Or(id, "<session-id>"))
	case errors.Is(err, permissions.ErrExpired):
		return fmt.Sprintf("nothing waits for this answer any more, and the call was not made. If the agent still needs it, it asks again: massgen-mcp status%s %s lists the asks still waiting, each with the command that answers it.", at.flags, cmp.Or(id, "<session-id>"))
	case errors.Is(err, coordination.ErrHostInRunTeam):
		return "a host agent acts only through an MCP client's step calls (massgen-mcp serve); a run calls every agent's model itself, so name models, not host."
	}
	return ""
}
