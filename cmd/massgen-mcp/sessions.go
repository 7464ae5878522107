package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

type sessionsFlags struct {
	json     bool
	all      bool
	page     int
	limit    int
	status   string
	text     string
	stateDir string
	tenant   string
	store    string
}

func sessionsCommand() *cobra.Command {
	var f sessionsFlags
	cmd := &cobra.Command{
		Use:   "sessions [--json] [--all] [--page N] [--status S] [--grep TEXT]",
		Short: "List sessions, newest first: id, status, winner, agents, started, duration, cost, task",
		Long: `List the sessions under the state dir, newest first, a page at a time
(--limit a page, 20 by default). --all lists every page. Only the sessions of
one tenant are listed: the default one, or --tenant's.`,
		Example: `  massgen-mcp sessions
  massgen-mcp sessions --page 2
  massgen-mcp sessions --status finished --grep haiku --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.page < 1 {
				return fmt.Errorf("%w: --page counts from 1", coordination.ErrBadInput)
			}
			if f.limit < 1 {
				return fmt.Errorf("%w: --limit must be at least 1", coordination.ErrBadInput)
			}
			q := coordination.SessionQuery{Status: f.status, Text: f.text, Offset: (f.page - 1) * f.limit, Limit: f.limit}
			if f.all {
				q.Offset, q.Limit = 0, 0
			}
			svc, at, done, err := storeService(cmd.Context(), f.stateDir, f.store, f.tenant)
			if err != nil {
				return err
			}
			defer done()
			page, err := svc.ListSessions(cmd.Context(), q)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if f.json {
				return printIndented(out, page)
			}
			fmt.Fprint(out, report.SessionsTable(page))
			if q.Limit > 0 && page.Total > 0 {
				pages := (page.Total + q.Limit - 1) / q.Limit
				fmt.Fprintf(out, "\nPage %d of %d (%s)", f.page, pages, coordination.Count(page.Total, "session"))
				if page.Next > 0 {
					fmt.Fprintf(out, "; next: massgen-mcp sessions%s --page %d, or --all", at.flags, f.page+1)
				}
				fmt.Fprintln(out)
			}
			if line := unreadableLine(page.Unreadable, at); line != "" {
				fmt.Fprintln(out, line)
			}
			return nil
		},
	}
	cmd.AddCommand(sessionsPruneCommand())
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print the page as JSON: sessions, total, offset, next_offset")
	fl.BoolVar(&f.all, "all", false, "every page at once")
	fl.IntVar(&f.page, "page", 1, "which page, from 1")
	fl.IntVar(&f.limit, "limit", 20, "sessions a page")
	fl.StringVar(&f.status, "status", "", "only sessions in this status: running, interrupted, decided, finished, failed, cancelled")
	fl.StringVar(&f.text, "grep", "", "only sessions whose id or task contains this text (any case)")
	fl.StringVar(&f.stateDir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	fl.StringVar(&f.tenant, "tenant", "", "list this tenant's sessions (<state-dir>/tenants/<tenant>, or its rows with --store) instead of the default tenant's")
	fl.StringVar(&f.store, "store", "", "a server's PostgreSQL store: a postgres:// URL (also $MASSGEN_STORE); default the file store under --state-dir")
	return cmd
}
