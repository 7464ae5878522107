package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// applyCommand is the CLI's apply_changes: it writes a finished session's
// pending changes — the winner's diff against its write context, which a
// run lists and leaves unwritten — all or nothing, and records it, so a
// second apply writes nothing and says so. Tool configuration among the
// changes (files the user's own tools run code from) is written only with
// --include-config; --skip-config writes the rest without it.
func applyCommand() *cobra.Command {
	var asJSON bool
	var opts coordination.ApplyOptions
	var dir, store string
	cmd := &cobra.Command{
		Use:   "apply [--json] [--include-config | --skip-config] <session-id>",
		Short: "Write a finished session's pending changes into its write context (--context-path DIR:write), all or nothing",
		Example: `  massgen-mcp run --context-path ./myapp:write "Fix the failing test"
  massgen-mcp apply team_20261202_101500_1a2b3c4d
  massgen-mcp apply --include-config team_20261202_101500_1a2b3c4d   # a .claude/settings.json, CI workflow, .envrc… too
  massgen-mcp apply --skip-config team_20261202_101500_1a2b3c4d      # everything but that tool configuration`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: apply takes one session id; 'massgen-mcp sessions' lists them, newest first", coordination.ErrBadInput)
			}
			if opts.IncludeConfig && opts.SkipConfig {
				return fmt.Errorf("%w: give one of --include-config (writes the tool configuration with the rest) and --skip-config (writes the rest without it), not both", coordination.ErrBadInput)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fileStoreOnly("apply", store, "ask the server with apply_changes, through any replica"); err != nil {
				return err
			}
			res, err := newService(stateDir(dir), 1).ApplyChanges(cmd.Context(), args[0], opts)
			if err != nil {
				// The To fix line names commands with this --state-dir.
				return storeOf(dir, store, "").wrap(err, args[0])
			}
			if asJSON {
				return printIndented(cmd.OutOrStdout(), res)
			}
			printApplied(cmd.OutOrStdout(), res, opts, storeOf(dir, store, "").flags)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was applied as JSON (the same as apply_changes)")
	cmd.Flags().BoolVar(&opts.IncludeConfig, "include-config", false, "also write the tool configuration the winner changed (.claude/, .mcp.json, .vscode/, .envrc, .github/workflows/, .npmrc, .gitattributes, …: files your own tools run code from); without it or --skip-config, such a change refuses the whole apply")
	cmd.Flags().BoolVar(&opts.SkipConfig, "skip-config", false, "write the rest of the changes and leave the tool configuration the winner changed unwritten")
	cmd.Flags().StringVar(&dir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	cmd.Flags().StringVar(&store, "store", "", fileStoreFlagUsage)
	return cmd
}

// printApplied says what an apply wrote, file by file; flags are what a
// printed command needs to reach the same store.
func printApplied(w io.Writer, res *coordination.ApplyResult, opts coordination.ApplyOptions, flags string) {
	a := res.Applied
	if res.AlreadyApplied {
		fmt.Fprintf(w, "Already applied: the changes of %s were written to %s before; nothing was written now.\n", res.SessionID, a.Context)
	} else {
		fmt.Fprintf(w, "Applied to %s: %d written, %d skipped\n", a.Context, len(a.Written), len(a.Skipped))
	}
	for _, c := range a.Written {
		reason := c.Reason
		if runs := workspace.ToolConfig(c.Path); reason == "" && runs != "" {
			// Written with --include-config: said so, as the pending
			// list said it before the user chose.
			reason = "tool configuration: " + runs
		}
		fmt.Fprintf(w, "  %s %s%s\n", c.Op, permissions.Shown(c.Path), workspace.Noted(reason))
	}
	for _, c := range a.Skipped {
		fmt.Fprintf(w, "  skipped: %s (%s): %s\n", permissions.Shown(c.Path), c.Op, c.Reason)
	}
	if why := res.ConfigStaysOut(opts, "--include-config", "--skip-config"); why != "" {
		fmt.Fprintf(w, "%s; to have it after all, copy it from the winner's files yourself (massgen-mcp status%s %s says where they are).\n", why, flags, res.SessionID)
	}
}
