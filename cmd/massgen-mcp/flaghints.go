package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/massgen-go/massgen-mcp/providers"
)

// massgenFlags are MassGen's command-line flags a user of it types here,
// with this command's flag that does the job and how it differs. A near
// miss finds typos; these say why the name changed.
var massgenFlags = map[string]struct{ ours, why string }{
	"model":                {"models", "comma-separated model specs, one per agent, e.g. --models openai/gpt-5.4,claude,gemini; MassGen's --model names one"},
	"backend":              {"models", "backend/model specs, e.g. --models openai/gpt-5.4,claude"},
	"no-display":           {"plain", "a line per step instead of the live view"},
	"debug":                {"verbose", "diagnostics on stderr"},
	"continue":             {"resume", "takes the id of the session to continue (massgen-mcp sessions lists them)"},
	"orchestrator-timeout": {"timeout", "the run's wall time in seconds"},
}

// flagError is every command's answer to a flag it does not know: cobra's
// "unknown flag: --model" plus the flag meant, when one is clear.
func flagError(cmd *cobra.Command, err error) error {
	var nf *pflag.NotExistError
	if !errors.As(err, &nf) {
		return err
	}
	name := nf.GetSpecifiedName()
	if hint := flagHint(cmd, name); hint != "" {
		return fmt.Errorf("%w; %s (massgen-mcp %s --help lists them all)", err, hint, cmd.Name())
	}
	return fmt.Errorf("%w (massgen-mcp %s --help lists the flags)", err, cmd.Name())
}

// flagHint names the flag of cmd that name probably meant, or "".
func flagHint(cmd *cobra.Command, name string) string {
	has := func(n string) bool { return cmd.Flags().Lookup(n) != nil || cmd.InheritedFlags().Lookup(n) != nil }
	if m, ok := massgenFlags[name]; ok && has(m.ours) {
		return fmt.Sprintf("did you mean --%s (%s)?", m.ours, m.why)
	}
	if len(name) <= 1 {
		return "" // a shorthand: nothing to measure
	}
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if d := providers.EditDistance(strings.ToLower(name), f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" || (len(name) <= 3 && bestD > 1) {
		return ""
	}
	return fmt.Sprintf("did you mean --%s?", best)
}
