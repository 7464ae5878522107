package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// cancelCommand is the CLI's cancel_team: it stops a session wherever its
// run is (this process, another massgen-mcp, an MCP server on the same state
// directory: a run loop watching its session stops within a second of the
// cancelled entry) and keeps every step that landed, so `run --resume`
// continues it.
func cancelCommand() *cobra.Command {
	var asJSON bool
	var dir, store, tenant string
	cmd := &cobra.Command{
		Use:   "cancel [--json] <session-id>",
		Short: "Stop a session's run wherever it runs; every landed step is kept and run --resume continues it",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: cancel takes one session id; 'massgen-mcp sessions' lists them, newest first", coordination.ErrBadInput)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, done, err := storeService(cmd.Context(), dir, store, tenant)
			if err != nil {
				return err
			}
			defer done()
			res, err := svc.Cancel(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printIndented(cmd.OutOrStdout(), res)
			}
			fmt.Fprintln(cmd.OutOrStdout(), report.Outcome(res))
			fmt.Fprintf(cmd.OutOrStdout(), "massgen-mcp run --resume %s continues it.\n", res.SessionID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (the same as cancel_team)")
	cmd.Flags().StringVar(&dir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	cmd.Flags().StringVar(&store, "store", "", "a server's PostgreSQL store: a postgres:// URL (also $MASSGEN_STORE); default the file store under --state-dir")
	cmd.Flags().StringVar(&tenant, "tenant", "", "the tenant whose session it is (default the default tenant)")
	return cmd
}
