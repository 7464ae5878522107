package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

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
	if plain(args[0]) {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // cobra's own default
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
		}
		return errors.New(msg)
	}
	return fmt.Errorf("%s takes no arguments and was given %d, not repeated here in case they hold a secret; a flag's value goes right after its flag, quoted when it holds spaces (--store 'host=… dbname=…')", cmd.CommandPath(), len(args))
}

// plain tells whether noArgs may repeat an argument: a word with none of
// the characters a URL, a key=value pair or a password is written with,
// and, if as long as a token (16 characters, the tokens file's least),
// without a digit (a subcommand's name has none; `openssl rand -hex 16`
// has).
func plain(arg string) bool {
	return plainWord.MatchString(arg) && (len(arg) < 16 || !strings.ContainsAny(arg, "0123456789"))
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)
