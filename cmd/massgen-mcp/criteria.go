package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

type criteriaFlags struct {
	count    int
	model    string
	kind     string
	session  string
	from     string
	massgen  bool
	json     bool
	stateDir string
}

// criteriaReport is what `criteria --json` prints: the same fields as the
// generate_eval_criteria tool's result.
type criteriaReport struct {
	criteria.Set
	SessionID string               `json:"session_id,omitempty"`
	MassGen   criteria.MassGenFile `json:"massgen_eval_criteria"`
}

func criteriaCommand() *cobra.Command {
	var f criteriaFlags
	cmd := &cobra.Command{
		Use:   `criteria [flags] "task"`,
		Short: "Write evaluation criteria for a task, or check your own, optionally attaching them to a session",
		Long: `Ask one model for evaluation criteria specific to a task: what an expert reviewer
would check, where typical model output is weakest, and how to verify each, with
exactly one must (the primary focus). The model is --model, else the first usable
of openai, gemini, claude and grok; with none usable (and sim only when named),
the built-in criteria for the kind of task are printed, marked source: default.

--from reads criteria you wrote (a JSON list or {"criteria": [...]}, in our shape,
MassGen's primary/standard/stretch tiers, or {id, name, description, weight}) and
validates, numbers and converts them instead. --session attaches the result to a
session before its first step; the task may then be left out. A server already
serving the same state dir keeps the setup it has read, so for a session that a
running server drives, attach there with generate_eval_criteria{session_id}.
--massgen prints only the file 'massgen --eval-criteria' reads.`,
		Example: `  massgen-mcp criteria "Write a Go function that parses ISO 8601 durations"
  massgen-mcp criteria --model sim --count 3 --kind plan "Migrate the billing DB to Postgres 17"
  massgen-mcp criteria --from mine.json --massgen "Review this API design" > eval.json
  massgen-mcp criteria --session team_20261129_101500_1a2b3c4d --model claude`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCriteria(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.count, "count", 0, "how many criteria to generate, 3 to 8 (default 5)")
	fl.StringVar(&f.model, "model", "", "model spec that writes them (default: the first usable of openai, gemini, claude, grok)")
	fl.StringVar(&f.kind, "kind", "", strings.Join(criteria.Kinds(), " | ")+" (default: guessed from the task; kind_reason says from which words)")
	fl.StringVar(&f.session, "session", "", "attach the criteria to this session, before its first step")
	fl.StringVar(&f.from, "from", "", "read criteria you wrote from this JSON file ('-' for stdin) instead of generating them")
	fl.BoolVar(&f.massgen, "massgen", false, "print only MassGen's --eval-criteria JSON")
	fl.BoolVar(&f.json, "json", false, "print the criteria and how they were made as JSON (as generate_eval_criteria returns them)")
	fl.StringVar(&f.stateDir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	return cmd
}

func runCriteria(cmd *cobra.Command, f criteriaFlags, args []string) error {
	ctx := cmd.Context()
	req := coordination.CriteriaRequest{
		Task:      strings.Join(args, " "),
		Kind:      f.kind,
		Count:     f.count,
		Model:     f.model,
		SessionID: f.session,
		// The operator's own --model: a base URL there takes the key.
		CommandLine: true,
	}
	if f.from != "" {
		data, err := readFrom(cmd.InOrStdin(), "--from", f.from, criteriaFile)
		if err != nil {
			return err
		}
		req.Provided = data
	} else if strings.TrimSpace(req.Model) == "" {
		if model, err := backends.FirstModel(ctx); err != nil {
			req.NoModel = err.Error()
		} else {
			req.Model = model
		}
	}
	set, err := newService(stateDir(f.stateDir), 1).Criteria(ctx, req)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	rep := criteriaReport{Set: set, SessionID: f.session, MassGen: criteria.MassGen(set.Items, set.Aspiration)}
	switch {
	case f.massgen:
		// stdout is the file; what a reader must still know goes to stderr.
		if set.Note != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "massgen-mcp: %s criteria: %s\n", set.Source, set.Note)
		}
		return printIndented(out, rep.MassGen)
	case f.json:
		return printIndented(out, rep)
	}
	fmt.Fprint(out, set.Text())
	if f.session != "" {
		fmt.Fprintf(out, "\nAttached to %s: every agent sees them and votes by them.\n", f.session)
	}
	return nil
}

// criteriaFile is what a flag naming a criteria file takes.
const criteriaFile = "a JSON file of criteria (massgen-mcp criteria --json writes one), or - for standard input"

// readFrom reads the criteria file flag names, or stdin for "-"; want
// says what the flag takes.
func readFrom(stdin io.Reader, flag, path, want string) ([]byte, error) {
	if path != "-" {
		return flagFile(flag, path, want)
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read criteria from %s: %w", coordination.ErrBadInput, path, err)
	}
	return data, nil
}
