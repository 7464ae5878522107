// Command massgen-bench measures massgen-mcp: what a team costs in time
// (overhead) and what it buys in accuracy (quality). It lives apart from the
// server binary so that the plotting stack (gonum, fonts, PDF) is never linked
// into massgen-mcp; docs/BENCHMARKS.md has the method and the numbers.
package main

import (
	"context"
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
	if err := rootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "massgen-bench:", err)
		os.Exit(1)
	}
}

func rootCommand() *cobra.Command {
	root := benchCommand()
	root.Use = "massgen-bench"
	root.SilenceUsage, root.SilenceErrors = true, true
	root.PersistentPreRun = func(cmd *cobra.Command, args []string) {
		// The benchmarks measure the engine under the collector setting the
		// server binary runs with.
		gc := gcpolicy.Tune()
		logger.Debug().Str("gc", gc).Msg("garbage collector")
	}
	return root
}

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// logger writes to stderr only: stdout carries the tables.
var logger = zerolog.New(os.Stderr).Level(zerolog.WarnLevel)
