package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// maxTaskBytes bounds a task read from a file or standard input: a task is
// a prompt, not a corpus (context files are for that).
const maxTaskBytes = 1 << 20

// readTask finds the task: the one argument, standard input when that
// argument is "-", or --task-file (where "-" is standard input too).
func readTask(cmd *cobra.Command, file string, args []string) (string, error) {
	switch {
	case file != "" && len(args) > 0:
		return "", fmt.Errorf("%w: give the task as an argument or with --task-file, not both", coordination.ErrBadInput)
	case file != "":
		return readTaskFrom(cmd, file)
	case len(args) == 1 && args[0] == "-":
		return readTaskFrom(cmd, "-")
	case len(args) == 1:
		return args[0], nil
	}
	example := `massgen-mcp run --models sim,sim,sim "What is 17 * 23?"`
	if fl := cmd.Flags().Lookup("continue"); fl != nil && fl.Value.String() != "" {
		// A follow-up turn keeps its team: --models would replace it.
		example = "massgen-mcp run --continue " + shellQuote(fl.Value.String()) + ` "the next task"`
	}
	return "", fmt.Errorf("%w: give the task as one quoted argument, e.g. %s; or - to read it from standard input, or --task-file FILE", coordination.ErrBadInput, example)
}

func readTaskFrom(cmd *cobra.Command, file string) (string, error) {
	var r io.Reader = cmd.InOrStdin()
	where := "standard input"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return "", flagFileErr("--task-file", file, "a text file holding the task (or - for standard input)", err)
		}
		defer f.Close()
		r, where = f, file
	}
	data, err := io.ReadAll(io.LimitReader(r, maxTaskBytes+1))
	if file != "-" && err != nil {
		// A directory opens, and fails only here.
		return "", flagFileErr("--task-file", file, "a text file holding the task (or - for standard input)", err)
	}
	if err != nil {
		return "", fmt.Errorf("%w: cannot read the task from %s: %w", coordination.ErrBadInput, where, err)
	}
	if len(data) > maxTaskBytes {
		return "", fmt.Errorf("%w: the task in %s is over %d bytes; put long material in a context file and keep the task short", coordination.ErrBadInput, where, maxTaskBytes)
	}
	task := strings.TrimSpace(string(data))
	if task == "" {
		return "", fmt.Errorf("%w: %s holds no task; write what the team should do", coordination.ErrBadInput, where)
	}
	return task, nil
}

// teamCriteria makes run --criteria's set: "auto" asks the first usable real
// model (as the criteria command does), falling back to the built-in
// criteria for the task's kind; anything else is a file of criteria written
// by hand, validated and numbered.
func teamCriteria(ctx context.Context, cmd *cobra.Command, svc *coordination.Service, from string, spec *coordination.TeamSpec) (criteria.Set, error) {
	// The team's budgets bind the call as its session's would.
	req := coordination.CriteriaRequest{Task: spec.Task, Team: spec}
	if from == "auto" {
		if model, err := backends.FirstModel(ctx); err != nil {
			req.NoModel = err.Error()
		} else {
			req.Model = model
		}
	} else {
		data, err := readFrom(cmd.InOrStdin(), "--criteria", from, criteriaFile+", or auto")
		if err != nil {
			return criteria.Set{}, err
		}
		req.Provided = data
	}
	set, err := svc.Criteria(ctx, req)
	if be := (*coordination.BudgetError)(nil); errors.As(err, &be) {
		// The team's own budget refused it, checked before the criteria:
		// the refusal is the team's, not the flag's.
		return criteria.Set{}, err
	}
	if err != nil {
		return criteria.Set{}, fmt.Errorf("--criteria %s: %w", from, err)
	}
	return set, nil
}

// criteriaSource says where a set came from, for the line run prints.
func criteriaSource(set criteria.Set) string {
	switch {
	case set.Source == criteria.SourceGenerated && set.Model != "":
		return ", written by " + set.Model
	case set.Source == criteria.SourceDefault:
		return ", the built-in ones (no usable model wrote them; massgen-mcp backends says why)"
	}
	return ", yours"
}
