package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// ldflagsVersion is set by `make build` with -ldflags "-X
// main.ldflagsVersion=…" (git describe); "" otherwise.
var ldflagsVersion string

// version is what --version, the version command, the MCP server's
// initialize reply and the CLI relay report: the -ldflags one, else what the
// Go toolchain recorded in the binary (`go install …@v1.2.3` and builds in
// a git checkout both record one), else "dev".
var version = resolveVersion(ldflagsVersion, debug.ReadBuildInfo)

// resolveVersion picks the version; read is debug.ReadBuildInfo (a
// parameter so tests can hand it build info of every shape).
func resolveVersion(set string, read func() (*debug.BuildInfo, bool)) string {
	if set != "" {
		return set
	}
	info, ok := read()
	if !ok {
		return "dev"
	}
	return buildInfoVersion(info)
}

// buildInfoVersion is the version a binary's build info names: the main
// module's version (v1.2.3 from the module proxy; a pseudo-version such as
// v0.0.0-20260101120000-abcdef123456+dirty from a checkout, Go 1.24 on),
// with the commit when the version does not already carry it, and
// "+dirty" when the tree had changes. A build with neither a module version
// nor a commit (go run in a copy without git) is "dev".
func buildInfoVersion(info *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	short := rev
	if len(short) > 12 {
		short = short[:12]
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		if short == "" {
			return "dev"
		}
		v = "dev-" + short
	} else if short != "" && !strings.Contains(v, short) {
		v += " (" + short + ")"
	}
	if modified == "true" && !strings.Contains(v, "+dirty") {
		v += "+dirty"
	}
	return v
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "massgen-mcp", version)
		},
	}
}
