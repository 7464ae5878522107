package cliagent

// What a sandboxed run's commands may not change for the commands after
// them in the same run: the files the shells its CLI starts read as they
// start. Between runs the whole HOME is fresh (freshhome.go).

import (
	"fmt"
	"path/filepath"
)

// shellStartupFiles are the files in HOME a shell runs as it starts: bash's
// and a POSIX shell's (a login shell's first, then an interactive one's),
// and zsh's.
var shellStartupFiles = []string{".bash_profile", ".bash_login", ".profile", ".bashrc", ".bash_logout", ".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"}

// stageShellStartup pins the shell startup files of a sandboxed run's
// fresh HOME, which the CLI sees at in: each an empty read-only file from
// blanks. The CLIs' shells read them there (Claude Code's shell snapshot
// sources ~/.bashrc in a login shell before a run's first command; Codex
// runs each command in a login shell), so one a command wrote would run,
// unjudged by the step's engine, before the run's later commands
// (TestAShellStartupFileInTheAgentsHOMEIsEmptyAndReadOnly). Pinned, they
// cannot be written, removed or renamed over in the run.
func stageShellStartup(c *Confinement, in, blanks string) error {
	for _, name := range shellStartupFiles {
		src, err := blank(blanks, name)
		if err != nil {
			return fmt.Errorf("cannot make an empty %s for the agent's HOME: %w", name, err)
		}
		c.Pinned = append(c.Pinned, Bind{Src: src, Dst: filepath.Join(in, name)})
	}
	return nil
}
