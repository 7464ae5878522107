package main

import (
	"errors"
	"fmt"

	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// dryRunTeam is the team of the --models example: simulated agents, which
// need no key, so that the example runs wherever it is printed.
const dryRunTeam = "sim/strong,sim/strong,sim"

// noTeamError is the default team's absence (backends.ErrNoDefaultTeam)
// met by a command that names a team with --models. The core's sentence
// is the same for every surface; the To fix line (errorFix) gives this
// command's own line with --models, which runs as printed.
type noTeamError struct {
	err     error
	example string
}

func (e *noTeamError) Error() string { return e.err.Error() }
func (e *noTeamError) Unwrap() error { return e.err }

// withModelsExample marks err, when it is the default team's absence, with
// the command that names a team instead: massgen-mcp verb, its flags (the
// --state-dir given), --models and what it was given (the task or
// objective, shell-quoted). Other errors pass as they are.
func withModelsExample(err error, verb, flags, given string) error {
	if !errors.Is(err, backends.ErrNoDefaultTeam) {
		return err
	}
	return &noTeamError{err: err, example: fmt.Sprintf("massgen-mcp %s%s --models %s %s", verb, flags, dryRunTeam, given)}
}

// fix is errorFix's line for it.
func (e *noTeamError) fix() string {
	return fmt.Sprintf("name the team with --models: %s runs it with simulated agents, which need no key; once a key is set, name real models the same way (e.g. --models openai,claude) or leave --models out for the default team.", e.example)
}
