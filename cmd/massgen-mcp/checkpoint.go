package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

type checkpointFlags struct {
	draft     string
	goals     string
	policy    []string
	context   []string
	models    string
	timeout   float64
	seed      int64
	parallel  int
	stateDir  string
	json      bool
	resume    string
	sessionID string
}

func checkpointCommand() *cobra.Command {
	var f checkpointFlags
	cmd := &cobra.Command{
		Use:   `checkpoint [flags] "objective"`,
		Short: "Have a team review a risky step: a plan with approved calls and rollbacks, and a verdict (proceed, revise, refuse)",
		Long: `checkpoint runs a review team on an objective before it is carried out. Each reviewer writes a
plan (or, with --draft, verifies and corrects yours) and a verdict; the team votes, and the winning
verdict and plan are printed with every reviewer's concerns.

Exit codes: 0 a verdict was reached (whatever it is), 1 bad input, 2 no review won, 4 cancelled
(resume with --resume).`,
		Example: `  massgen-mcp checkpoint --models sim,sim,sim "Drop the legacy_orders table from the production database"
  massgen-mcp checkpoint --draft plan.json --policy "Never touch the billing schema." --json "Migrate users to the new schema"
  massgen-mcp checkpoint --resume team_20261129_101500_1a2b3c4d`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheckpoint(cmd.Context(), cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.draft, "draft", "", "a JSON file with your plan (a list of steps in the plan schema): the team verifies it")
	fl.StringVar(&f.goals, "goals", "", "a JSON file with action goals: [{id, goal, preferred_tools?, constraints?}]")
	fl.StringArrayVar(&f.policy, "policy", nil, "a safety rule added to the built-in policy (repeatable)")
	fl.StringArrayVar(&f.context, "context", nil, "text the reviewers should know (repeatable)")
	fl.StringVar(&f.models, "models", "", "comma-separated reviewer model specs, e.g. sim/strong,sim,sim (default: the default team)")
	fl.Float64Var(&f.timeout, "timeout", 0, "wall time of the review in seconds (default 1800)")
	fl.Int64Var(&f.seed, "seed", 0, "seed for aliases, tie draws and sim reviewers (default random)")
	fl.IntVar(&f.parallel, "parallel", 8, "provider calls at once")
	fl.StringVar(&f.stateDir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	fl.BoolVar(&f.json, "json", false, "print the checkpoint result as JSON")
	fl.StringVar(&f.resume, "resume", "", "continue a cancelled checkpoint (or print a finished one) by session id")
	fl.StringVar(&f.sessionID, "session-id", "", "id for the new session (default generated)")
	return cmd
}

func runCheckpoint(ctx context.Context, cmd *cobra.Command, f checkpointFlags, args []string) error {
	out := cmd.OutOrStdout()
	spec, err := checkpointSpec(cmd, f, args)
	if err != nil {
		return err
	}
	svc := newService(stateDir(f.stateDir), f.parallel)
	var progress func(coordination.Progress)
	if !f.json {
		progress = progressLines(ctx, svc, out)
	}
	res, err := checkpoint.Run(ctx, svc, spec, progress)
	if err != nil {
		err = withModelsExample(err, "checkpoint", stateDirFlag(f.stateDir), shellQuote(spec.Objective))
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return &exitError{code: exitCancelled, msg: "interrupted; resume with: massgen-mcp checkpoint" + stateDirFlag(f.stateDir) + " --resume <session id> (massgen-mcp sessions" + storeOf(f.stateDir, "file", "").flags + " lists them)"}
		}
		return err
	}
	if f.json {
		if err := printIndented(out, res); err != nil {
			return err
		}
	} else {
		printCheckpoint(out, res)
	}
	switch {
	case res.Verdict != nil:
		return nil
	case res.Status == coordination.StatusCancelled:
		return &exitError{code: exitCancelled, printed: f.json, msg: fmt.Sprintf("cancelled; resume with: massgen-mcp checkpoint%s --resume %s", stateDirFlag(f.stateDir), res.SessionID)}
	default:
		return &exitError{code: exitFailed, printed: f.json, msg: fmt.Sprintf("no review won (%s)", coordination.Deref(res.StopReason))}
	}
}

// checkpointSpec builds the review from the flags, the files they name and
// the objective.
func checkpointSpec(cmd *cobra.Command, f checkpointFlags, args []string) (checkpoint.Spec, error) {
	spec := checkpoint.Spec{SessionID: f.resume}
	if f.resume != "" {
		if len(args) > 0 {
			return spec, fmt.Errorf("%w: --resume takes no objective; the session has its own", coordination.ErrBadInput)
		}
		return spec, nil
	}
	if len(args) != 1 {
		return spec, fmt.Errorf("%w: give the objective as one quoted argument, e.g. massgen-mcp checkpoint --models sim,sim,sim \"Drop the legacy_orders table in production\"", coordination.ErrBadInput)
	}
	spec.Objective, spec.SessionID = args[0], f.sessionID
	spec.SafetyPolicy, spec.Context = f.policy, f.context
	if f.draft != "" {
		if err := readJSONFile(f.draft, "--draft", "a list of plan steps [{step, kind, description, preconditions, touches, recovery, …}]", &spec.DraftPlan); err != nil {
			return spec, err
		}
	}
	if f.goals != "" {
		if err := readJSONFile(f.goals, "--goals", "a list of action goals [{id, goal, preferred_tools, constraints}]", &spec.ActionGoals); err != nil {
			return spec, err
		}
	}
	spec.Models, spec.CommandLine = splitModels(f.models), true
	if cmd.Flags().Changed("timeout") {
		spec.Rules.TimeoutSeconds = f.timeout
	}
	if cmd.Flags().Changed("seed") {
		spec.Seed = &f.seed
	}
	return spec, nil
}

// readJSONFile decodes a file strictly: a misspelt field (rollbak) would
// otherwise vanish from the plan without a word.
func readJSONFile(path, flag, shape string, v any) error {
	data, err := flagFile(flag, path, "a JSON file of "+shape)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s %s is not %s: %w", coordination.ErrBadInput, flag, path, shape, err)
	}
	return nil
}

func printCheckpoint(w io.Writer, res *checkpoint.Result) {
	fmt.Fprintln(w)
	if res.Verdict == nil {
		fmt.Fprintf(w, "No verdict: the review is %s (%s).\n", res.Status, coordination.Deref(res.StopReason))
	} else {
		fmt.Fprintf(w, "Verdict: %s (%s; winning review %s by %s)\n", *res.Verdict, coordination.Deref(res.HowChosen), res.Winner.Label, res.Winner.AgentID)
	}
	if len(res.Plan) > 0 {
		fmt.Fprintln(w, "\nPlan:")
		for _, st := range res.Plan {
			fmt.Fprintf(w, "  %d. [%s] %s\n", st.Step, st.Kind, st.Description)
			var facts []string
			if len(st.Preconditions) > 0 {
				facts = append(facts, "after "+joinInts(st.Preconditions))
			}
			if len(st.Touches) > 0 {
				facts = append(facts, "touches "+strings.Join(st.Touches, ", "))
			}
			if st.GoalID != "" {
				facts = append(facts, "goal "+st.GoalID)
			}
			facts = append(facts, "if it fails: "+strings.Join(st.Recovery, " → "))
			fmt.Fprintf(w, "     %s\n", strings.Join(facts, " · "))
			if st.ApprovedCall != nil {
				fmt.Fprintf(w, "     approved call: %s\n", callText(st.ApprovedCall))
			}
			switch {
			case st.Rollback != nil:
				fmt.Fprintf(w, "     rollback: %s\n", callText(st.Rollback))
			case st.RollbackNoneReason != "":
				fmt.Fprintf(w, "     no rollback: %s\n", st.RollbackNoneReason)
			}
		}
	}
	for _, c := range res.Concerns {
		if len(c.Concerns) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nConcerns of %s (%s, %s):\n", c.Label, c.AgentID, c.Verdict)
		for _, x := range c.Concerns {
			fmt.Fprintf(w, "  - %s\n", x)
		}
	}
	cost := "unknown"
	if res.CostUSD != nil {
		cost = fmt.Sprintf("$%.4f", *res.CostUSD)
	}
	fmt.Fprintf(w, "\nSteps: %d · tokens in %d, out %d · cost %s\n", res.Steps, res.Usage.Input, res.Usage.Output, cost)
	fmt.Fprintf(w, "Session: %s (%s)\n", res.SessionID, res.SessionDir)
}

func callText(c *checkpoint.PlannedCall) string {
	args, _ := json.Marshal(c.Arguments)
	if c.Arguments == nil {
		args = []byte("{}")
	}
	return c.Tool + " " + string(args)
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
