package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// MassGen opens an interactive prompt when the question is left out: each
// line is the next turn of one conversation. run does the same on a
// terminal, each turn a session that continues the one before
// (coordination's follow-up turns), with the live view between prompts.

// promptsForTurns tells whether run, given no task, should prompt for one
// turn after another: only when standard input and output are a terminal
// (a script that forgets its task gets the usual error, not a prompt).
func promptsForTurns(cmd *cobra.Command, f runFlags, args []string) bool {
	if len(args) > 0 || f.taskFile != "" || f.json || f.estimate {
		return false
	}
	in, ok := cmd.InOrStdin().(*os.File)
	return ok && in == os.Stdin && isatty.IsTerminal(in.Fd()) && isTerminal(cmd.OutOrStdout())
}

// turnPrompt is what the prompt shows before each line.
const turnPrompt = "massgen> "

// interactive reads a task a line and runs it as the next turn, until an
// empty input, /quit or the end of input. A turn that fails or is refused
// is reported and the prompt stays: the next line continues from the last
// turn that finished.
func interactive(ctx context.Context, cmd *cobra.Command, f runFlags, svc *coordination.Service) error {
	out := cmd.OutOrStdout()
	lines := bufio.NewScanner(cmd.InOrStdin())
	lines.Buffer(make([]byte, 64<<10), maxTaskBytes)
	prev := f.continues
	fmt.Fprintln(out, "Each line is the next turn of one conversation, building on the last answer and its files; /quit or Ctrl-D ends.")
	if prev != "" {
		fmt.Fprintf(out, "Continuing %s.\n", prev)
	}
	for {
		fmt.Fprint(out, turnPrompt)
		if !lines.Scan() {
			fmt.Fprintln(out)
			return lines.Err()
		}
		task := strings.TrimSpace(lines.Text())
		switch task {
		case "":
			continue
		case "/quit", "/exit":
			return nil
		}
		id, err := oneTurn(ctx, cmd, f, svc, prev, task, out)
		if ctx.Err() != nil {
			return err
		}
		if err != nil {
			fmt.Fprintf(out, "%s\n", turnError(err))
		}
		if id != "" {
			if res, rerr := svc.Result(ctx, id); rerr == nil && res.Status == coordination.StatusFinished {
				prev = id
			}
		}
		if prev != "" {
			fmt.Fprintf(out, "\nNext line continues %s.\n", prev)
		}
	}
}

// oneTurn creates the next turn after prev (a new conversation when prev
// is "") and runs it under the live view.
func oneTurn(ctx context.Context, cmd *cobra.Command, f runFlags, svc *coordination.Service, prev, task string, out io.Writer) (string, error) {
	spec, err := teamSpec(cmd, f, []string{task})
	if err != nil {
		return "", err
	}
	spec.ContinueFrom = prev
	if prev != "" {
		spec.SessionID = "" // --session-id names the first turn only
	}
	// Each turn is judged by --criteria as a run of its task alone would be.
	if err := attachRunCriteria(ctx, cmd, f, svc, &spec, out); err != nil {
		return "", err
	}
	s, err := svc.Create(ctx, spec)
	if err != nil {
		return "", err
	}
	printCreated(out, s, spec)
	return s.ID, runAndReport(ctx, f, svc, s.ID, out)
}

// turnError is a failed turn's line: its message, and for an exit the
// message it would have ended the program with.
func turnError(err error) string {
	var ee *exitError
	if errors.As(err, &ee) {
		return "This turn: " + ee.msg
	}
	return "This turn: " + err.Error()
}
