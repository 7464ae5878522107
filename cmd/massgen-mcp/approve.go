package main

import (
	"context"
	"fmt"
	"io"
	"os/user"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// approveCommand and denyCommand answer an agent's ask in a headless run
// (the file handshake: <session>/requests/<id>.json → responses/<id>.json,
// docs/DESIGN.md "Permissions"). status lists the pending ones.
func approveCommand() *cobra.Command { return answerCommand(true) }

func denyCommand() *cobra.Command { return answerCommand(false) }

func answerCommand(approve bool) *cobra.Command {
	var dir, session string
	verb, short := "approve", "Approve an agent's pending ask (status lists them); it runs once"
	if !approve {
		verb, short = "deny", "Refuse an agent's pending ask (status lists them); the agent is told no"
	}
	cmd := &cobra.Command{
		Use:   verb + " [--session <id>] <request-id>",
		Short: short,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: %s takes one request id; 'massgen-mcp status <session>' lists the pending ones", coordination.ErrBadInput, verb)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return answerAsk(cmd.Context(), cmd.OutOrStdout(), newService(stateDir(dir), 1), session, args[0], approve)
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the session that asked (default: the one whose request has this id)")
	cmd.Flags().StringVar(&dir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	return cmd
}

// answerAsk finds the session whose pending ask has the id, when none is
// named, and answers it.
func answerAsk(ctx context.Context, out io.Writer, svc *coordination.Service, session, id string, approve bool) error {
	if session == "" {
		ids, err := svc.Store().Sessions(ctx)
		if err != nil {
			return err
		}
		for _, sid := range ids {
			pending, _ := svc.PendingApprovals(sid)
			for _, r := range pending {
				if r.ID == id {
					session = sid
				}
			}
		}
		if session == "" {
			return fmt.Errorf("%w: no session has a pending ask %q (answered already, timed out, or another state dir); 'massgen-mcp status <session>' lists the pending ones", coordination.ErrBadInput, id)
		}
	}
	by := "massgen-mcp " + map[bool]string{true: "approve", false: "deny"}[approve]
	if u, err := user.Current(); err == nil {
		by += " by " + u.Username
	}
	if err := svc.Approve(session, id, approve, by); err != nil {
		return err
	}
	word := map[bool]string{true: "approved", false: "refused"}[approve]
	fmt.Fprintf(out, "%s %s in session %s.\n", word, id, session)
	return nil
}
