package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/tui"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

type runFlags struct {
	rehearse   bool
	models     string
	config     string
	consensus  string
	maxRounds  int
	timeout    float64
	budget     float64
	final      string
	short      bool
	earlyStop  bool
	seed       int64
	parallel   int
	stateDir   string
	json       bool
	plain      bool
	resume     string
	sessionID  string
	maxAnswers int
	strict     bool // --strict-config
	strictTeam bool // --strict
	taskFile   string
	contexts   []string
	images     []string
	criteria   string
	maxCLI     int
	estimate   bool
	apply      bool
	continues  string // --continue
}

func runCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   `run [flags] "task" | -`,
		Short: "Run a team on a task and print each step, the winner and the final answer",
		Long:  "Run a team on a task and print each step, the winner and the final answer.\n\n" + exitCodesHelp,
		Example: `  massgen-mcp run --models sim/strong,sim/strong,sim --seed 1 "What is 17 * 23?"
  massgen-mcp run --config team.yaml --consensus unanimous "Write a haiku about Go"
  massgen-mcp run --models sim,sim,sim --task-file task.md
  echo "What is 17 * 23?" | massgen-mcp run --models sim,sim,sim -
  massgen-mcp run --models sim,sim,sim "Build a one-page landing site for a bakery"
  massgen-mcp run --context-path ./myapp:write "Add tests to the parser"
  massgen-mcp run --context-path ./myapp:write --apply "Fix the failing test"
  massgen-mcp run --image sketch.png "Build this page"
  massgen-mcp run --estimate --budget 1 --models openai/gpt-5.4,claude,gemini "Review this design"
  massgen-mcp run --resume team_20261129_101500_1a2b3c4d
  massgen-mcp run --continue team_20261129_101500_1a2b3c4d "now add dark mode"
  massgen-mcp run --models sim,sim,sim            (on a terminal: each line you type is the next turn)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTeam(cmd.Context(), cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.rehearse, "rehearse", false, "run against fake providers started in this process, with dummy keys and temporary CLI homes: nothing real is called or billed")
	fl.StringVar(&f.models, "models", "", "comma-separated model specs, e.g. sim/strong,sim,sim/weak")
	fl.StringVar(&f.config, "config", "", "team file with agents, rules and context: massgen-mcp's own YAML or MassGen's config YAML")
	fl.BoolVar(&f.strict, "strict-config", false, "treat settings in --config that massgen-mcp does not honour as errors")
	fl.StringVar(&f.consensus, "consensus", "", "majority | plurality | unanimous | weighted (default majority; weighted needs --short)")
	fl.IntVar(&f.maxRounds, "max-rounds", 0, "steps per agent (default 5)")
	fl.IntVar(&f.maxAnswers, "max-answers", 0, "answers per agent before it may only vote (default 3)")
	fl.Float64Var(&f.timeout, "timeout", 0, "wall time of this run in seconds (default 1800)")
	fl.Float64Var(&f.budget, "budget", 0, "cost budget in USD for the whole session")
	fl.StringVar(&f.final, "final", "", "winner | present | synthesize (default winner)")
	fl.BoolVar(&f.short, "short", false, "answers end in a final value that can be compared (answer_format short)")
	fl.BoolVar(&f.earlyStop, "early-stop", false, "with --short: stop after round 0 if a strict majority already agrees")
	fl.Int64Var(&f.seed, "seed", 0, "seed for aliases, tie draws and sim agents (default random)")
	fl.IntVar(&f.parallel, "parallel", 8, "provider calls at once")
	fl.IntVar(&f.maxCLI, "max-cli-agents", cliagent.DefaultMaxProcesses(), "coding-agent CLI processes (codex, claude_code, gemini_cli) running at once")
	fl.StringVar(&f.stateDir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	fl.BoolVar(&f.json, "json", false, "print the team result as JSON")
	fl.BoolVar(&f.plain, "plain", false, "print a line per step even on a terminal, instead of the live view")
	fl.StringVar(&f.resume, "resume", "", "continue a cancelled or interrupted session by id")
	fl.StringVar(&f.sessionID, "session-id", "", "id for the new session (default generated)")
	fl.StringVar(&f.continues, "continue", "", "run the task as the next turn of this finished session: its final answer is the context and its winner's files start every workspace; the team, rules, contexts and seed are its own unless given")
	fl.StringVar(&f.criteria, "criteria", "", "evaluation criteria every agent sees and votes by: auto (written for the task by the first usable model, else the built-in ones for its kind) or a JSON file of your own")
	fl.StringVar(&f.taskFile, "task-file", "", "read the task from this file (- for standard input)")
	fl.BoolVar(&f.strictTeam, "strict", false, "fail instead of running a smaller team: refuse agents without a key, end as failed when an agent drops or fewer than two answer")
	fl.BoolVar(&f.estimate, "estimate", false, "print the team's worst-case cost at list prices against --budget and exit; nothing is run or spent")
	fl.StringArrayVar(&f.contexts, "context-path", nil, "a project directory every agent reads, DIR or DIR:write (each workspace starts from it; the winner's changes are listed and written back by --apply or massgen-mcp apply <session-id>); repeatable")
	fl.StringArrayVar(&f.images, "image", nil, "an image file (PNG, JPEG, GIF or WebP, at most 5 MiB) every agent is given with the task: in its API's format, or as a file in a CLI agent's workspace; repeatable (at most 8, 20 MiB in all)")
	fl.BoolVar(&f.apply, "apply", false, "write the winner's changes into the DIR:write context as the run ends (all or nothing: a file changed meanwhile refuses it; tool configuration among the changes (.github/workflows/, .claude/, .envrc, …) refuses it, until massgen-mcp apply --include-config or --skip-config <session-id>); without it they wait for massgen-mcp apply <session-id>")
	return cmd
}

func runTeam(ctx context.Context, cmd *cobra.Command, f runFlags, args []string) error {
	err := runTeamIn(ctx, cmd, f, args)
	// An error already marked with its session (run --apply's refusal,
	// which knows the generated id) keeps that mark: wrapped again here
	// with only --resume's or --continue's id, its To fix printed
	// <session-id>, which does not paste.
	if placed := (*storeError)(nil); errors.As(err, &placed) && placed.id != "" {
		return err
	}
	// The advice names this state directory, so that it pastes.
	at := storeOf(f.stateDir, "file", "")
	if pg := envPostgres(); pg != "" && (f.resume != "" || f.continues != "") {
		// A session of the server's store: say what reaches it.
		at.runAside, at.runContinues = pg, f.resume == ""
	}
	return at.wrap(err, cmp.Or(f.resume, f.continues))
}

// runAside is the line run prints when $MASSGEN_STORE names a PostgreSQL
// store: run has no --store and keeps its sessions in the file store, so
// a user who exported the variable for serve and the session commands is
// told where this session goes. A note, not a refusal: the file store's
// session works as documented, and the README's setup exports the
// variable in the shell that also runs local teams.
func runAside(dir string) string {
	return fmt.Sprintf("massgen-mcp: note: run keeps its sessions in the file store under %s (--state-dir); MASSGEN_STORE names a PostgreSQL store, which only serve and the session commands (sessions, status, cancel, approve, deny) use", dir)
}

func runTeamIn(ctx context.Context, cmd *cobra.Command, f runFlags, args []string) error {
	out := cmd.OutOrStdout()
	if envPostgres() != "" && !f.estimate {
		fmt.Fprintln(cmd.ErrOrStderr(), runAside(stateDir(f.stateDir)))
	}
	if f.rehearse {
		end, err := beginRehearsal(cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer end()
	}
	cliagent.SetMaxProcesses(f.maxCLI)
	svc := newService(stateDir(f.stateDir), f.parallel)
	id := f.resume
	if id != "" && f.continues != "" {
		return fmt.Errorf("%w: give --resume (the same session, carried on) or --continue (a new turn after it), not both", coordination.ErrBadInput)
	}
	if id == "" && promptsForTurns(cmd, f, args) {
		return interactive(ctx, cmd, f, svc)
	}
	if id == "" {
		spec, err := teamSpec(cmd, f, args)
		if err != nil {
			return err
		}
		spec.ContinueFrom = f.continues
		// Without a key there is no default team: say how to name one.
		given := shellQuote(spec.Task)
		if f.taskFile != "" {
			given = "--task-file " + shellQuote(f.taskFile)
		}
		if f.estimate {
			return withModelsExample(printEstimate(out, svc, spec, f.json), "run", stateDirFlag(f.stateDir), given)
		}
		if err := attachRunCriteria(ctx, cmd, f, svc, &spec, out); err != nil {
			return withModelsExample(err, "run", stateDirFlag(f.stateDir), given)
		}
		s, err := svc.Create(ctx, spec)
		if err != nil {
			return diskFullExit(out, withModelsExample(err, "run", stateDirFlag(f.stateDir), given), f.stateDir, "", f.json)
		}
		id = s.ID
		if !f.json {
			printCreated(out, s, spec)
		}
	} else if len(args) > 0 {
		return fmt.Errorf("%w: --resume takes no task; the session has its own", coordination.ErrBadInput)
	}
	return runAndReport(ctx, f, svc, id, out)
}

// attachRunCriteria gives the spec run --criteria's set, and says which it is.
func attachRunCriteria(ctx context.Context, cmd *cobra.Command, f runFlags, svc *coordination.Service, spec *coordination.TeamSpec, out io.Writer) error {
	if f.criteria == "" {
		return nil
	}
	set, err := teamCriteria(ctx, cmd, svc, f.criteria, spec)
	if err != nil {
		return err
	}
	// Criteria checks the team first, as Create will, so a team its
	// budget refuses pays for no criteria. The call was paid for the
	// session about to be created: Create records its spend there, in the
	// run's tokens, cost and budgets.
	spec.Criteria, spec.CriteriaUsage = set.Items, set.Usage
	if !f.json {
		fmt.Fprintf(out, "Criteria: %s, %s task%s\n", coordination.Count(len(set.Items), "criterion"), set.Kind, criteriaSource(set))
	}
	return nil
}

// printCreated says which team a new session has.
func printCreated(out io.Writer, s *coordination.Session, spec coordination.TeamSpec) {
	fmt.Fprintf(out, "Session %s: %s", s.ID, coordination.Count(len(s.Agents), "agent"))
	for _, a := range s.Agents {
		fmt.Fprintf(out, " · %s=%s", a.ID, providers.ShowSpec(a.Model))
	}
	fmt.Fprintln(out)
	if s.Turn > 0 {
		fmt.Fprintf(out, "Turn %d, continuing %s", s.Turn, s.Previous)
		if s.StartFiles > 0 {
			fmt.Fprintf(out, " (every workspace starts with its winner's %s)", coordination.Count(s.StartFiles, "file"))
		}
		fmt.Fprintln(out)
	}
	if len(spec.Models) == 0 && len(spec.Agents) == 0 && spec.ContinueFrom == "" {
		if _, why, err := backends.DefaultTeamWhy(); err == nil {
			fmt.Fprintf(out, "Default team: %s\n", why)
		}
	}
	for _, d := range s.Dropped {
		fmt.Fprintf(out, "Warning: %s (%s) is left out: %s\n", d.AgentID, d.Model, d.Message)
	}
}

// runAndReport runs a session to its end, prints its result and says how
// it ended as the exit code.
func runAndReport(ctx context.Context, f runFlags, svc *coordination.Service, id string, out io.Writer) error {
	var res *coordination.TeamResult
	var err error
	if !f.json && !f.plain && isTerminal(out) {
		res, err = runLive(ctx, svc, id, out)
	} else {
		var progress func(coordination.Progress)
		if !f.json {
			progress = progressLines(ctx, svc, out)
		}
		res, err = svc.Run(ctx, id, progress)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return &exitError{code: exitCancelled, msg: "interrupted; resume with: " + resumeCommand(f.stateDir, id)}
		}
		return diskFullExit(out, err, f.stateDir, id, f.json)
	}
	var applyErr error
	if f.apply && res.ChangesPending {
		if _, applyErr = svc.ApplyChanges(ctx, id, coordination.ApplyOptions{}); applyErr == nil {
			if res, err = svc.Result(ctx, id); err != nil {
				return err
			}
		}
	}
	if f.json {
		if err := printIndented(out, res); err != nil {
			return err
		}
	} else {
		printResult(out, res, storeOf(f.stateDir, "file", "").flags)
	}
	if applyErr != nil {
		return storeOf(f.stateDir, "file", "").wrap(applyErr, id)
	}
	switch res.Status {
	case coordination.StatusFinished:
		return finishedExit(res, f.json, storeOf(f.stateDir, "file", "").flags)
	case coordination.StatusCancelled:
		return &exitError{code: exitCancelled, printed: f.json, msg: "cancelled; resume with: " + resumeCommand(f.stateDir, id)}
	default:
		return &exitError{code: exitFailed, printed: f.json, msg: fmt.Sprintf("the team produced no answer (%s)", coordination.Deref(res.StopReason))}
	}
}

// teamSpec builds a team from the flags, the team file and the task.
func teamSpec(cmd *cobra.Command, f runFlags, args []string) (coordination.TeamSpec, error) {
	var spec coordination.TeamSpec
	task, err := readTask(cmd, f.taskFile, args)
	if err != nil {
		return spec, err
	}
	spec.Task = task
	if f.config != "" {
		if f.models != "" {
			return spec, fmt.Errorf("%w: give --models or --config, not both", coordination.ErrBadInput)
		}
		if err := statFlagFile("--config", f.config, "a team file (massgen-mcp's own YAML or MassGen's config YAML; massgen-mcp config check FILE reads one)"); err != nil {
			return spec, err
		}
		tf, err := loadTeamFile(cmd, f.config, f.strict)
		if err != nil {
			return spec, err
		}
		teamFromFile(&spec, tf)
	}
	for _, c := range f.contexts {
		spec.Contexts = append(spec.Contexts, contextPath(c))
	}
	if spec.Images, err = readImageFiles(f.images); err != nil {
		return spec, err
	}
	spec.Models = splitModels(f.models)
	spec.CommandLine = true // the operator's own --models: a base URL there takes the backend's key
	spec.Rules = flagRules(cmd, f).Over(spec.Rules)
	if set := cmd.Flags().Changed; set("seed") {
		spec.Seed = &f.seed
	}
	spec.SessionID = f.sessionID
	return spec, nil
}

// flagRules are the rules the flags set, to go over the team file's: a flag
// left out sets none.
func flagRules(cmd *cobra.Command, f runFlags) coordination.Rules {
	var r coordination.Rules
	set := cmd.Flags().Changed
	if set("consensus") {
		r.Consensus = coordination.ConsensusRule(f.consensus)
	}
	if set("max-rounds") {
		r.MaxRounds = f.maxRounds
	}
	if set("max-answers") {
		r.MaxAnswersPerAgent = f.maxAnswers
	}
	if set("timeout") {
		r.TimeoutSeconds = f.timeout
	}
	if set("budget") {
		r.CostBudgetUSD = &f.budget
	}
	if set("final") {
		r.Final = coordination.FinalStrategy(f.final)
	}
	if f.short {
		r.AnswerFormat = coordination.FormatShort
	}
	if f.earlyStop {
		r.EarlyStop = true
	}
	if f.strictTeam {
		r.Strict = true
	}
	return r
}

// progressLines prints a run's progress, one line a step, naming agents by
// id and model (report.Names: the messages name answers by label). The
// session's names are read once, at its first line: aliases and models are
// fixed when a session is created.
func progressLines(ctx context.Context, svc *coordination.Service, w io.Writer) func(coordination.Progress) {
	var names *report.Names
	return func(p coordination.Progress) {
		if names == nil {
			n := report.Names{}
			if v, err := svc.Status(ctx, p.SessionID); err == nil {
				n = report.NamesOf(v)
			}
			names = &n // unread, the labels show as they are: no line is lost
		}
		printProgress(w, p, *names)
	}
}

func printProgress(w io.Writer, p coordination.Progress, names report.Names) {
	msg := names.Message(p.Message, p.Agent)
	switch p.Kind {
	case coordination.ProgressAnswer, coordination.ProgressVote, coordination.ProgressError:
		fmt.Fprintf(w, "%s  %s\n", p.Time.Local().Format(time.TimeOnly), msg)
	case coordination.ProgressDecided, coordination.ProgressCancelled:
		fmt.Fprintf(w, "%s  ── %s\n", p.Time.Local().Format(time.TimeOnly), msg)
	}
}

// printResult writes the run's result; flags are what a printed command
// needs to reach its session (--state-dir).
func printResult(w io.Writer, res *coordination.TeamResult, flags string) {
	fmt.Fprintln(w)
	fmt.Fprint(w, report.Result(res))
	if res.StopReason != nil {
		fmt.Fprintf(w, "\nStop reason: %s\n", *res.StopReason)
	}
	switch {
	case res.ChangesPending && res.Changes.ConfigCount > 0:
		fmt.Fprintf(w, "\nNothing was written to %s yet. Review the changes, the tool configuration above first (the winner's files are in %s); then `massgen-mcp apply --include-config%s %s` writes them all, or `massgen-mcp apply --skip-config%s %s` writes the rest without the tool configuration.\n", res.Changes.Context, res.FilesDir, flags, res.SessionID, flags, res.SessionID)
	case res.ChangesPending:
		fmt.Fprintf(w, "\nNothing was written to %s yet. Review the changes (the winner's files are in %s), then `massgen-mcp apply%s %s` writes them.\n", res.Changes.Context, res.FilesDir, flags, res.SessionID)
	}
}

// contextPath reads --context-path DIR[:write|:read].
func contextPath(arg string) workspace.Context {
	if i := strings.LastIndexByte(arg, ':'); i > 0 {
		switch perm := arg[i+1:]; perm {
		case workspace.Read, workspace.Write:
			return workspace.Context{Path: arg[:i], Permission: perm}
		}
	}
	return workspace.Context{Path: arg}
}

// runLive runs the session under the live view and leaves its last frame on
// the terminal; the result follows as in line output.
func runLive(ctx context.Context, svc *coordination.Service, id string, out io.Writer) (*coordination.TeamResult, error) {
	o, err := tui.Run(ctx, svc, id, keyboard(), out)
	fmt.Fprintln(out, o.Final)
	if err != nil {
		return nil, err
	}
	if o.Err == nil && o.Result == nil && o.Cancelled {
		return nil, context.Canceled
	}
	return o.Result, o.Err
}

// keyboard is where the view reads keys: stdin when it is a terminal, else
// none (a task read from a pipe with run -).
func keyboard() io.Reader {
	if isatty.IsTerminal(os.Stdin.Fd()) {
		return os.Stdin
	}
	return nil
}

// isTerminal tells whether out is this process's stdout on a terminal: only
// then is the live view drawn.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	return ok && f == os.Stdout && isatty.IsTerminal(f.Fd())
}

// finishedExit is how a finished session's answer exits, for run and
// status --watch alike: 0 only when the team agreed, 3 when it was
// degraded, else by why it stopped (forcedExit). printed says the result
// was printed as JSON already; flags are the store's (storeAt.flags), for
// the status command the message names.
func finishedExit(res *coordination.TeamResult, printed bool, flags string) error {
	if res.Degraded {
		return &exitError{code: exitDegraded, printed: printed, msg: degradedMessage(res, flags)}
	}
	if !coordination.Agreed(res) {
		return &exitError{code: forcedExit(coordination.Deref(res.StopReason)), printed: printed, msg: "not agreed: " + res.NotAgreed}
	}
	return nil
}
