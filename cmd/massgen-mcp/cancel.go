package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// cancelCommand is the CLI's cancel_team: it stops a session wherever its
// run is (this process, another massgen-mcp, an MCP server on the same state
// directory: a run loop watching its session stops within a second of the
// cancelled entry) and keeps every step that landed, so `run --resume`
// continues it (a PostgreSQL store's session: run_team{session_id} through
// a server, or the web view's Resume; run keeps to the file store).
func cancelCommand() *cobra.Command {
	var asJSON bool
	var dir, store, tenant string
	cmd := &cobra.Command{
		Use:   "cancel [--json] <session-id>",
		Short: "Stop a session's run wherever it runs; every landed step is kept and the session stays resumable",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: cancel takes one session id; 'massgen-mcp sessions' lists them, newest first", coordination.ErrBadInput)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, at, done, err := storeService(cmd.Context(), dir, store, tenant)
			if err != nil {
				return err
			}
			defer done()
			res, err := svc.Cancel(cmd.Context(), args[0])
			if err != nil {
				return at.wrap(err, args[0])
			}
			if asJSON {
				return printIndented(cmd.OutOrStdout(), res)
			}
			fmt.Fprintln(cmd.OutOrStdout(), at.place(res.SessionID).Outcome(res))
			if at.postgres() {
				// run keeps to the file store: a server resumes this one.
				fmt.Fprintf(cmd.OutOrStdout(), "Resume it with %s.\n", at.place(res.SessionID).Resume(res.SessionID))
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s continues it.\n", at.resume(res.SessionID))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (the same as cancel_team)")
	cmd.Flags().StringVar(&dir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	cmd.Flags().StringVar(&store, "store", "", "a server's PostgreSQL store: a postgres:// URL (also $MASSGEN_STORE); default the file store under --state-dir")
	cmd.Flags().StringVar(&tenant, "tenant", "", "the tenant whose session it is (default the default tenant)")
	return cmd
}
