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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := rootCommand()
	err := root.ExecuteContext(ctx)
	if err != nil {
		var silent *exitError
		if !errors.As(err, &silent) || !silent.printed {
			fmt.Fprintln(os.Stderr, "massgen-mcp:", errorText(err))
		}
	}
	os.Exit(exitCode(err))
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
