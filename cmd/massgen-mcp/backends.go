package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// backendsReport is what `backends --json` prints.
type backendsReport struct {
	Backends    []backends.BackendStatus `json:"backends"`
	DefaultTeam defaultTeamReport        `json:"default_team"`
	// Sandbox is whether agents' commands can run sandboxed here.
	Sandbox providers.SandboxStatus `json:"sandbox"`
	// Problems are .env files that were skipped because they do not parse.
	Problems []string `json:"problems,omitempty"`
}

type defaultTeamReport struct {
	Models []string `json:"models"`
	Why    string   `json:"why,omitempty"`   // why these models
	Error  string   `json:"error,omitempty"` // why there is none, and how to get one
}

func backendsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "backends [--json]",
		Short: "Show which model backends are usable here, and why not, and the default team",
		Long: `Show every model backend with whether it can be used here: its API key is set
(in the environment, ./.env or ~/.env), its local server answers, or its CLI is on
PATH. Then the default team: the first three of openai, gemini, claude and grok
that have keys, or two models of the one that has, and whether agents' commands
can run sandboxed (bubblewrap; without it run_command is not offered). Keys are
never shown.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// One snapshot of the environment and .env files for the whole
			// listing, so the table and the team cannot disagree.
			r := backends.Config{}.Report(cmd.Context())
			rep := backendsReport{Backends: r.Backends, Problems: r.Problems, Sandbox: r.Sandbox}
			rep.DefaultTeam.Models = []string{}
			if r.DefaultTeamErr != nil {
				rep.DefaultTeam.Error = r.DefaultTeamErr.Error()
			} else {
				rep.DefaultTeam.Models, rep.DefaultTeam.Why = r.DefaultTeam, r.DefaultTeamWhy
			}
			if asJSON {
				return printIndented(cmd.OutOrStdout(), rep)
			}
			printBackends(cmd, rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the table and the default team as JSON")
	return cmd
}

func printBackends(cmd *cobra.Command, rep backendsReport) {
	out := cmd.OutOrStdout()
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tUSABLE\tWHY")
	for _, b := range rep.Backends {
		usable := "no"
		if b.Usable {
			usable = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Name, usable, b.Why)
	}
	tw.Flush()
	fmt.Fprintln(out)
	if rep.DefaultTeam.Error != "" {
		why := strings.TrimPrefix(rep.DefaultTeam.Error, backends.ErrNoDefaultTeam.Error()+": ")
		fmt.Fprintf(out, "Default team: none. The default team %s\n", strings.TrimPrefix(why, "it "))
	} else {
		fmt.Fprintf(out, "Default team: %s — %s\n", strings.Join(rep.DefaultTeam.Models, ", "), rep.DefaultTeam.Why)
	}
	sandbox := "no"
	if rep.Sandbox.Available {
		sandbox = "yes"
	}
	fmt.Fprintf(out, "Sandbox for agents' commands (run_command, stdio MCP servers): %s — %s\n", sandbox, rep.Sandbox.Why)
	for _, p := range rep.Problems {
		fmt.Fprintln(out, "Note:", p)
	}
}
