package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

func statusCommand() *cobra.Command {
	var asJSON, watch, plain bool
	var dir, store, tenant string
	cmd := &cobra.Command{
		Use:   "status [--json] [--watch] [--store postgres://… --tenant T] <session-id | dir>",
		Short: "Show a session: agents, votes with staleness, consensus, next agents, and the result if finished",
		Long: `Show a session by id (under the state dir) or by directory. A directory written by
MassGen's own 'massgen --step' works too: its agents come from agents/*.

--watch follows the session until it ends, wherever it runs (another
massgen-mcp process, an MCP server, MassGen's own --step processes): the live
view on a terminal, else a line per event. Leaving the view stops nothing. It
follows the file store; a PostgreSQL server's session (--store, MASSGEN_STORE)
is followed in the server's web view (/ui/) or with team_status.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return fmt.Errorf("%w: name a session: massgen-mcp status <session-id | dir>; 'massgen-mcp sessions' lists them, newest first", coordination.ErrBadInput)
			case 1:
				return nil
			}
			return fmt.Errorf("%w: status takes one session id or directory; got %d arguments", coordination.ErrBadInput, len(args))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if watch {
				wdir, err := watchStore(dir, store, tenant, args[0])
				if err != nil {
					return err
				}
				return watchStatus(ctx, cmd.OutOrStdout(), args[0], wdir, storeOf(dir, "file", tenant), plain, asJSON)
			}
			var v *coordination.StatusView
			var svc *coordination.Service
			var at storeAt
			if looksLikeDir(args[0]) {
				fs, id, err := filestore.ForSessionDir(args[0])
				if err != nil {
					return fmt.Errorf("%w: %w", coordination.ErrSessionNotFound, err)
				}
				// Read only: a directory may belong to MassGen or to a live
				// run elsewhere.
				svc, at = coordination.NewService(fs, coordination.Options{Logger: logger}), storeOfSessionDir(args[0])
				if v, err = svc.Inspect(ctx, id); err != nil {
					return err
				}
			} else {
				var done func()
				var err error
				if svc, at, done, err = storeService(ctx, dir, store, tenant); err != nil {
					return err
				}
				defer done()
				if v, err = svc.Status(ctx, args[0]); err != nil {
					return at.wrap(err, args[0])
				}
			}
			if asJSON {
				return printIndented(cmd.OutOrStdout(), statusJSON{StatusView: v, Permissions: sessionPermissions(ctx, svc, v.Result.SessionID, at.flags)})
			}
			// A PostgreSQL store's session has no directory here (the one
			// its result recorded is a replica's), and run --resume cannot
			// reach it: the place says what is true of it instead.
			fmt.Fprint(cmd.OutOrStdout(), at.place(v.Result.SessionID).Markdown(v))
			// The pictures need the ledger; a session whose ledger cannot
			// be read now still shows its table above.
			l, err := svc.Ledger(ctx, v.Result.SessionID)
			if err != nil {
				l = nil
			}
			fmt.Fprint(cmd.OutOrStdout(), report.StatusSections(v, l, 100))
			printPermissions(ctx, cmd.OutOrStdout(), svc, v.Result.SessionID, at.flags)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status data as JSON (the same as team_status, with a permissions block)")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "follow the session until it ends (live view on a terminal)")
	cmd.Flags().BoolVar(&plain, "plain", false, "with --watch: a line per event even on a terminal")
	cmd.Flags().StringVar(&dir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	cmd.Flags().StringVar(&store, "store", "", "a server's PostgreSQL store: a postgres:// URL (also $MASSGEN_STORE); default the file store under --state-dir (not with --watch)")
	cmd.Flags().StringVar(&tenant, "tenant", "", "the tenant whose session it is (default the default tenant)")
	return cmd
}

// watchStore is the state directory status --watch follows the session
// in: the file store's, or its tenant's beneath it. A PostgreSQL store
// (--store, or $MASSGEN_STORE for a session id) is refused, saying where
// such a session is followed; a directory argument is followed wherever
// it is.
func watchStore(dir, store, tenant, arg string) (string, error) {
	pg := pgStore(store)
	switch {
	case pg != "" && (isPostgres(store) || !looksLikeDir(arg)):
		from, unset := "--store", ""
		if !isPostgres(store) {
			from, unset = "$MASSGEN_STORE", "; to watch a session of the file store under --state-dir, unset MASSGEN_STORE"
		}
		return "", fmt.Errorf("%w: status --watch follows the file store, and %s names a PostgreSQL store: a server's session is watched in its web view (/ui/) or with team_status, and massgen-mcp status%s %s shows it once%s", coordination.ErrBadInput, from, storeFlags(store, tenant), arg, unset)
	case store != "" && store != "file" && pg == "":
		return "", fmt.Errorf("%w: --store %s: status --watch follows the file store (the default) only", coordination.ErrBadInput, storeNamed(store))
	case tenant != "":
		return tenantState(stateDir(dir), tenant)
	}
	return dir, nil
}

// looksLikeDir tells a directory argument from a session id.
func looksLikeDir(arg string) bool {
	if strings.ContainsAny(arg, `/\`) || arg == "." || arg == ".." {
		return true
	}
	if coordination.ValidSessionID(arg) {
		return false
	}
	fi, err := os.Stat(filepath.Clean(arg))
	return err == nil && fi.IsDir()
}
