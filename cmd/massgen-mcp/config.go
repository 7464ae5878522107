package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/teamfile"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// loadTeamFile reads a team file (ours or MassGen's YAML) for run --config
// and prints the one warning that names every setting it ignores.
func loadTeamFile(cmd *cobra.Command, path string, strict bool) (*teamfile.Team, error) {
	t, err := teamfile.Load(path, teamfile.Options{Strict: strict})
	if err != nil {
		return nil, err
	}
	if w := t.Warning(); w != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "massgen-mcp: warning:", w)
	}
	return t, nil
}

func configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check team files (massgen-mcp's own or MassGen's YAML)",
	}
	var strict bool
	check := &cobra.Command{
		Use:   "check FILE",
		Short: "Print the team, rules and context a team file resolves to, and every problem in it",
		Long: `Read a team file as run --config and serve --teams-dir would, and print what it
resolves to: the agents and their models, the rules with every default filled in,
the context, the operator-only settings it uses, the settings that are not honoured
(with what they would have done), and every error. Exit 0 when the file is usable,
1 when it is not (with --strict-config, ignored settings count as errors).`,
		Example: `  massgen-mcp config check examples/massgen-three-agents.yaml
  massgen-mcp config check --strict-config team.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return configCheck(cmd.OutOrStdout(), args[0], strict)
		},
	}
	check.Flags().BoolVar(&strict, "strict-config", false, "treat settings massgen-mcp does not honour as errors")
	cmd.AddCommand(check)
	return cmd
}

// configCheck prints what a team file resolves to and every problem; the
// error, if any, says the file is unusable.
func configCheck(w io.Writer, path string, strict bool) error {
	t, err := teamfile.Load(path, teamfile.Options{Strict: strict})
	if t != nil && len(t.Agents) > 0 {
		printTeam(w, t)
	}
	if err != nil {
		fmt.Fprintf(w, "\nProblems:\n")
		if p, ok := err.(*teamfile.Problems); ok {
			for _, line := range p.List {
				fmt.Fprintf(w, "  - %s\n", line)
			}
		} else {
			fmt.Fprintf(w, "  - %v\n", err)
		}
		return &exitError{code: exitBadInput, msg: fmt.Sprintf("%s is not usable; fix the problems above", path)}
	}
	fmt.Fprintf(w, "\n%s is usable.\n", path)
	return nil
}

func printTeam(w io.Writer, t *teamfile.Team) {
	fmt.Fprintf(w, "Team %q (%s format, %s)\n\nAgents:\n", t.Name, t.Format, t.Path)
	for i, a := range t.Agents {
		id := a.ID
		if id == "" {
			id = fmt.Sprintf("(agent %d: id assigned at start)", i+1)
		}
		fmt.Fprintf(w, "  - %s: %s", id, providers.ShowSpec(a.Model))
		if a.Temperature != nil {
			fmt.Fprintf(w, ", temperature %g", *a.Temperature)
		}
		if a.ReasoningEffort != "" {
			fmt.Fprintf(w, ", reasoning effort %s", a.ReasoningEffort)
		}
		if a.MaxOutputTokens > 0 {
			fmt.Fprintf(w, ", max output tokens %d", a.MaxOutputTokens)
		}
		if a.SystemMessage != "" {
			fmt.Fprintf(w, ", system message %q", clip(a.SystemMessage, 60))
		}
		fmt.Fprintln(w)
	}
	if r, err := t.Rules.Normalize(); err == nil {
		fmt.Fprintf(w, "\nRules (defaults filled in):\n  consensus %s, max_rounds %d, max_answers_per_agent %d, final %s, answer_format %s, early_stop %t\n",
			r.Consensus, r.MaxRounds, r.MaxAnswersPerAgent, r.Final, r.AnswerFormat, r.EarlyStop)
		fmt.Fprintf(w, "  timeout_seconds %g, step_timeout_seconds %g, max_agent_failures %d", r.TimeoutSeconds, r.StepTimeoutSeconds, r.MaxAgentFailures)
		if r.CostBudgetUSD != nil {
			fmt.Fprintf(w, ", cost_budget_usd %g", *r.CostBudgetUSD)
		}
		if r.TokenBudget != nil {
			fmt.Fprintf(w, ", token_budget %d", *r.TokenBudget)
		}
		// Shown only when set: under weighted it decides whether the vote round
		// runs at all, and a team that differs by it alone must not read alike.
		if r.DominantStop {
			fmt.Fprint(w, ", dominant_stop true")
		}
		fmt.Fprintln(w)
	}
	if len(t.Context) > 0 || len(t.ContextPaths) > 0 {
		fmt.Fprintln(w, "\nContext:")
		for _, cp := range t.ContextPaths {
			fmt.Fprintf(w, "  - path %s (%s)\n", cp.Path, cp.Permission)
		}
		for _, c := range t.Context {
			fmt.Fprintf(w, "  - text %q\n", clip(c, 60))
		}
	}
	if len(t.Operator) > 0 {
		fmt.Fprintln(w, "\nOperator-only settings (honoured from this file and the command line, refused from an MCP client):")
		for _, key := range t.Operator {
			fmt.Fprintf(w, "  - %s\n", key)
		}
	}
	if len(t.Ignored) > 0 {
		fmt.Fprintln(w, "\nNot honoured by massgen-mcp (ignored; --strict-config makes them errors):")
		for _, n := range t.Ignored {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

// clip shortens s to n runes on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// teamFromFile copies a loaded team into a spec.
func teamFromFile(spec *coordination.TeamSpec, t *teamfile.Team) {
	spec.Agents = append([]coordination.Agent(nil), t.Agents...)
	spec.Rules = t.Rules
	spec.Context = append(spec.Context, t.Context...)
	spec.Contexts = append(spec.Contexts, t.Dirs...)
	spec.Apply = t.Apply
	spec.Criteria = append([]criteria.Item(nil), t.Criteria...)
}
