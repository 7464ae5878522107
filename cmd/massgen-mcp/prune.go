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
				return fmt.Errorf("%w: --older-than is required, so that no prune deletes every ended session by accident: give an age, a whole number and a unit, %s, such as 30d, 2w, 720h or 90m", coordination.ErrBadInput, ageUnits)
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
	fl.StringVar(&f.olderThan, "older-than", "", "delete sessions last active longer ago than this: a whole number and a unit, "+ageUnits+" (30d, 2w, 720h, 90m); required")
	fl.StringSliceVar(&f.statuses, "status", nil, "only sessions in these statuses (finished, failed, cancelled, interrupted; default finished,failed,cancelled)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list what would be deleted and delete nothing")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON: deleted (each with its bytes), skipped, bytes_freed, blobs_deleted")
	fl.StringVar(&f.stateDir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	fl.StringVar(&f.tenant, "tenant", "", "prune this tenant's sessions (<state-dir>/tenants/<tenant>, or its rows with --store) instead of the default tenant's")
	fl.StringVar(&f.store, "store", "", "a server's PostgreSQL store: a postgres:// URL (also $MASSGEN_STORE); default the file store under --state-dir")
	return cmd
}

// ageUnits is what --older-than takes, as its help and errors say it.
const ageUnits = "s, m (minutes), h, d (days) or w (weeks)"

// parseAge reads --older-than: a Go duration, or a whole number of days
// ("30d") or weeks ("2w"), which operators think in and
// time.ParseDuration lacks. Months and years, whose lengths differ, are
// refused, and so is "M": "1m" is a minute, and a user who meant a month
// must hear so before anything is deleted.
func parseAge(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		for unit, day := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
			if n, ok := strings.CutSuffix(s, unit); ok {
				if k, nerr := strconv.Atoi(n); nerr == nil {
					d, err = time.Duration(k)*day, nil
				}
			}
		}
	}
	unit := strings.TrimLeft(s, "0123456789. ")
	switch {
	case err == nil && d > 0:
		return d, nil
	case strings.HasPrefix(strings.ToLower(unit), "mo"):
		return 0, fmt.Errorf("%w: --older-than %q: months differ in length: give days (30d) or weeks (4w)", coordination.ErrBadInput, s)
	case unit == "M":
		return 0, fmt.Errorf("%w: --older-than %q: \"M\" is no unit: m is minutes; for a month give days (30d) or weeks (4w)", coordination.ErrBadInput, s)
	case strings.HasPrefix(strings.ToLower(unit), "y"):
		return 0, fmt.Errorf("%w: --older-than %q: years differ in length: give days (365d)", coordination.ErrBadInput, s)
	}
	return 0, fmt.Errorf("%w: --older-than %q is not a positive age: give a whole number and a unit, %s, such as 30d, 2w, 720h or 90m", coordination.ErrBadInput, s, ageUnits)
}

// ageWords is an age as people say it ("1 minute", "30 days"), in the
// largest unit it is a whole number of, so that the cutoff a prune prints
// shows what "1m" meant.
func ageWords(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{7 * 24 * time.Hour, "week"}, {24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if d >= u.d && d%u.d == 0 {
			return coordination.Count(int(d/u.d), u.name)
		}
	}
	return d.String()
}

// cutoffWords is the prune's cutoff as a time and an age in words: "before
// 2026-12-07 13:14:05 UTC (1 minute ago)".
func cutoffWords(age time.Duration, now time.Time) string {
	return fmt.Sprintf("before %s (%s ago)", now.Add(-age).Format("2006-01-02 15:04:05 MST"), ageWords(age))
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
		fmt.Fprintf(w, "No session to prune: none ended and last active %s.\n", cutoffWords(age, time.Now()))
	} else {
		fmt.Fprintf(w, "%s %s, ended and last active %s:\n", verb, coordination.Count(len(rep.Deleted), "session"), cutoffWords(age, time.Now()))
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
