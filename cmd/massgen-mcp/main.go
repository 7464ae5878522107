package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/gcpolicy"
	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/nodump"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := rootCommand()
	keepKeysPrivate(root)
	err := root.ExecuteContext(ctx)
	if err != nil {
		var silent *exitError
		if !errors.As(err, &silent) || !silent.printed {
			fmt.Fprintln(os.Stderr, "massgen-mcp:", errorText(err))
		}
	}
	os.Exit(exitCode(err))
}

// keepKeysPrivate warns when the process could not be made non-dumpable
// (package nodump made it so as it initialized, before any key could be
// read from it), and makes workflow-server dumpable again: each other
// command holds the operator's environment, keys included, and any may run
// beside an unsandboxed agent of this user. The workflow server is left
// inspectable: a CLI agent starts it, in the agent's sandbox when there is
// one, with the environment the agent gave it, so it holds nothing its
// agent does not, and its working directory shows a leftover one
// (clitest.ProcessesIn). It is main's, not rootCommand's, so that the tests
// that run commands in their own process leave that process as it is.
func keepKeysPrivate(root *cobra.Command) {
	pre := root.PersistentPreRun
	root.PersistentPreRun = func(cmd *cobra.Command, args []string) {
		pre(cmd, args) // sets up the logger
		if cmd.Name() == "workflow-server" {
			if err := nodump.Set(true); err != nil {
				logger.Debug().Err(err).Msg("could not make the workflow server dumpable again")
			}
			return
		}
		if nodump.Err != nil {
			logger.Warn().Err(nodump.Err).Msg("could not make this process non-dumpable (prctl PR_SET_DUMPABLE): an agent running as this user outside the sandbox could read the providers' keys from /proc/<pid>/environ")
		}
	}
}

func rootCommand() *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:           "massgen-mcp",
		Short:         "Run a team of LLM agents on one task until their votes agree (the MassGen protocol)",
		SilenceUsage:  true,
		SilenceErrors: true,
		// An argument that is no command is refused by noArgs, not by
		// cobra's own check, which repeats it (a DSN whose --store was
		// forgotten); a command with no Run would print its help before
		// any check.
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			level := zerolog.WarnLevel
			if verbose {
				level = zerolog.DebugLevel
			}
			logger = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: true}).Level(level).With().Timestamp().Logger()
			// Every command: serve and run coordinate steps in bursts, and
			// bench measures what they run with.
			gc := gcpolicy.Tune()
			logger.Debug().Str("gc", gc).Msg("garbage collector")
		},
	}
	// --version prints what the version command prints.
	root.Version = version
	root.SetVersionTemplate("massgen-mcp {{.Version}}\n")
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log diagnostics to stderr")
	// Subcommands ask their parents for this (cobra's FlagErrorFunc).
	root.SetFlagErrorFunc(flagError)
	// One command per line, so that adding one is a one-line change.
	root.AddCommand(
		serveCommand(),
		runCommand(),
		statusCommand(),
		cancelCommand(),
		approveCommand(),
		denyCommand(),
		uiLinkCommand(),
		applyCommand(),
		sessionsCommand(),
		backendsCommand(),
		criteriaCommand(),
		checkpointCommand(),
		fsckCommand(),
		configCommand(),
		installCommand(),
		uninstallCommand(),
		fakeProvidersCommand(),
		workflowServerCommand(),
		versionCommand(),
	)
	return root
}

// logger writes to stderr only: stdout carries results (and, for serve, the
// protocol).
var logger = zerolog.New(os.Stderr).Level(zerolog.WarnLevel)
