package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
)

type pruneFlags struct {
	olderThan string
	statuses  []string
	dryRun    bool
	json      bool
	stateDir  string
	tenant    string
	store     string
}

// sessionsPruneCommand deletes old sessions that ended; the service
// decides which (coordination.Service.Prune), the store deletes them.
func sessionsPruneCommand() *cobra.Command {
	var f pruneFlags
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION [--status S,…] [--dry-run] [--json]",
		Short: "Delete sessions that ended longer ago than --older-than, and the space they held",
		Long: `Delete the sessions that ended (finished, failed or cancelled; interrupted ones
only when --status names interrupted, since they can be resumed) and whose last
activity is older than --older-than. A session a run, a step or a replica's run
lease holds is kept, checked under its locks. A follow-up turn keeps working
when the turn it continues is deleted (its setup holds the history, its files
were copied). On a PostgreSQL store the blobs nothing names any more are
collected after a day's grace. --dry-run lists what would go and deletes
nothing. Only one tenant's sessions: the default one, or --tenant's.

The space freed is the file store's disk usage of the deleted sessions; on
PostgreSQL, the stored size of their rows (pg_column_size, measured as they
are deleted) and of the blobs collected, which the database reuses (its files
shrink only with VACUUM FULL).`,
		Example: `  massgen-mcp sessions prune --older-than 30d --dry-run
  massgen-mcp sessions prune --older-than 720h --status finished,cancelled
  massgen-mcp sessions prune --older-than 7d --store postgres://… --tenant acme --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("older-than") {
				return fmt.Errorf("%w: --older-than is required, so that no prune deletes every ended session by accident: give an age such as 30d, 720h or 90m", coordination.ErrBadInput)
			}
			age, err := parseAge(f.olderThan)
			if err != nil {
				return err
			}
			svc, at, done, err := storeService(cmd.Context(), f.stateDir, f.store, f.tenant)
			if err != nil {
				return err
			}
			defer done()
			rep, err := svc.Prune(cmd.Context(), coordination.PruneRequest{OlderThan: age, Statuses: f.statuses, DryRun: f.dryRun})
			if rep != nil {
				out := cmd.OutOrStdout()
				if f.json {
					if perr := printIndented(out, rep); err == nil {
						err = perr
					}
				} else {
					printPrune(out, rep, age, at.postgres())
				}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.olderThan, "older-than", "", "delete sessions last active longer ago than this: a Go duration (720h, 90m) or days (30d); required")
	fl.StringSliceVar(&f.statuses, "status", nil, "only sessions in these statuses (finished, failed, cancelled, interrupted; default finished,failed,cancelled)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list what would be deleted and delete nothing")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON: deleted (each with its bytes), skipped, bytes_freed, blobs_deleted")
	fl.StringVar(&f.stateDir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	fl.StringVar(&f.tenant, "tenant", "", "prune this tenant's sessions (<state-dir>/tenants/<tenant>, or its rows with --store) instead of the default tenant's")
	fl.StringVar(&f.store, "store", "", "a server's PostgreSQL store: a postgres:// URL (also $MASSGEN_STORE); default the file store under --state-dir")
	return cmd
}

// parseAge reads --older-than: a Go duration, or a whole number of days
// ("30d"), which operators think in and time.ParseDuration lacks.
func parseAge(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		if n, nerr := strconv.Atoi(days); nerr == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: --older-than %q is not a positive age: give a duration such as 720h or 90m, or days such as 30d", coordination.ErrBadInput, s)
	}
	return d, nil
}

// printPrune writes the report for people: each session deleted (or that
// would be), what was kept under its locks, and the space freed. In a
// PostgreSQL store (pg) that is the deleted rows' stored size and the
// collected blobs', which the database reuses: its files do not shrink.
func printPrune(w io.Writer, rep *coordination.PruneReport, age time.Duration, pg bool) {
	verb := "Deleted"
	if rep.DryRun {
		verb = "Would delete"
	}
	if len(rep.Deleted) == 0 {
		fmt.Fprintf(w, "No session to prune: none ended and last active more than %s ago.\n", age)
	} else {
		fmt.Fprintf(w, "%s %s:\n", verb, coordination.Count(len(rep.Deleted), "session"))
		for _, p := range rep.Deleted {
			fmt.Fprintf(w, "  %s  %-11s last active %s  %s\n", p.ID, p.Status, p.LastActive.UTC().Format(time.RFC3339), coordination.Preview(p.Task, 60))
		}
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "Kept %s: %s.\n", s.ID, s.Reason)
	}
	switch {
	case rep.DryRun && pg:
		fmt.Fprintf(w, "Nothing deleted (--dry-run); that would free %s of rows in the database (blobs nothing names any more are collected a day after their last use).\n", byteCount(rep.Bytes))
	case rep.DryRun:
		fmt.Fprintf(w, "Nothing deleted (--dry-run); that would free %s.\n", byteCount(rep.Bytes))
	default:
		where := ""
		if pg {
			where = " in the database (PostgreSQL reuses it; its files shrink only with VACUUM FULL)"
		}
		fmt.Fprintf(w, "Freed %s%s", byteCount(rep.Bytes), where)
		if rep.Blobs > 0 {
			fmt.Fprintf(w, "; %s deleted", coordination.Count(rep.Blobs, "blob"))
		}
		if rep.Leftovers > 0 {
			fmt.Fprintf(w, "; %s an interrupted prune left removed", coordination.Count(rep.Leftovers, "session"))
		}
		fmt.Fprintln(w, ".")
	}
}

// byteCount is a size for people, in binary units.
func byteCount(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
