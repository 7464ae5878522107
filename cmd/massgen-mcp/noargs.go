package main

import (
	"fmt"
	"regexp"

	"github.com/spf13/cobra"
)

// noArgs is cobra.NoArgs without repeating an argument that may carry a
// secret: a DSN left without its --store, or a key=value one left
// unquoted (--store host=h password=…), went whole into cobra's "unknown
// command" error, on the terminal and in the logs it is copied to. A
// plain word (a mistyped subcommand) is still named.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if plainWord.MatchString(args[0]) {
		return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return fmt.Errorf("%s takes no arguments and was given %d, not repeated here in case they hold a secret; a flag's value goes right after its flag, quoted when it holds spaces (--store 'host=… dbname=…')", cmd.CommandPath(), len(args))
}

// plainWord is an argument noArgs may repeat: short, and with none of the
// characters a URL, a key=value pair or a password is written with.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)
