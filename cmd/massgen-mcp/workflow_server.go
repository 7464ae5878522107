package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// workflowServerCommand is the relay a CLI agent's step starts as its
// workflow MCP server (providers/cliagent/relay). It is not for people: a
// step writes the view file and names it.
func workflowServerCommand() *cobra.Command {
	var view string
	var hook bool
	cmd := &cobra.Command{
		Use:   "workflow-server --view FILE",
		Short: "The workflow MCP server a CLI agent's step runs (new_answer, vote); started by the step, not by hand",
		Long: `Serve one CLI agent step's workflow tools over stdio: new_answer, and vote
with exactly the step's vote_enum, as the step's view file lists them. Each
call is forwarded over the step's private Unix socket to the step that started
the CLI, and the step's verdict is the tool's result. It never opens the
session store.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if view == "" {
				return fmt.Errorf("%w: --view is required; the workflow server is started by a CLI agent's step", coordination.ErrBadInput)
			}
			v, err := relay.ReadView(view)
			if err != nil {
				return fmt.Errorf("%w: %w", coordination.ErrBadInput, err)
			}
			if hook {
				// A CLI's hook protocol reads exit status 2 as a refusal,
				// with stderr as the reason the model is shown.
				if err := relay.Hook(cmd.Context(), v, cmd.InOrStdin(), cmd.OutOrStdout()); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					os.Exit(2)
				}
				return nil
			}
			return relay.Serve(cmd.Context(), v, cmd.InOrStdin(), cmd.OutOrStdout(), version)
		},
	}
	cmd.Flags().StringVar(&view, "view", "", "the step's view file (written by the step)")
	cmd.Flags().BoolVar(&hook, "hook", false, "answer one permission question of the CLI's hook (its JSON on stdin) and exit")
	return cmd
}
