package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

func statusCommand() *cobra.Command {
	var asJSON bool
	var dir string
	cmd := &cobra.Command{
		Use:   "status [--json] <session-id | dir>",
		Short: "Show a session: agents, votes with staleness, consensus, next agents, and the result if finished",
		Long: `Show a session by id (under the state dir) or by directory. A directory written by
MassGen's own 'massgen --step' works too: its agents come from agents/*.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var v *coordination.StatusView
			if looksLikeDir(args[0]) {
				store, id, err := filestore.ForSessionDir(args[0])
				if err != nil {
					return fmt.Errorf("%w: %w", coordination.ErrSessionNotFound, err)
				}
				// Read only: a directory may belong to MassGen or to a live
				// run elsewhere.
				if v, err = coordination.NewService(store, coordination.Options{Logger: logger}).Inspect(ctx, id); err != nil {
					return err
				}
			} else {
				svc := newService(stateDir(dir), 1)
				var err error
				if v, err = svc.Status(ctx, args[0]); err != nil {
					return err
				}
			}
			if asJSON {
				return printIndented(cmd.OutOrStdout(), v)
			}
			fmt.Fprint(cmd.OutOrStdout(), v.Markdown())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status data as JSON (the same as team_status)")
	cmd.Flags().StringVar(&dir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	return cmd
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
