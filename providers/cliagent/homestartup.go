package cliagent

// What a sandboxed agent's HOME, its own from run to run, may not hand the
// next run: the files the programs its CLI runs read there as they start
// and run, with no step's engine judging them.

import (
	"fmt"
	"os"
	"path/filepath"
)

// shellStartupFiles are the files in HOME a shell runs as it starts: bash's
// and a POSIX shell's (a login shell's first, then an interactive one's),
// and zsh's.
var shellStartupFiles = []string{".bash_profile", ".bash_login", ".profile", ".bashrc", ".bash_logout", ".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"}

// stageShellStartup readies the shell startup files of a sandboxed agent's
// HOME home, which the CLI sees at in, for one run: each an empty read-only
// file from blanks, what an earlier run left under its name removed. The
// HOME is the agent's own from run to run, and the CLIs' shells read them
// there (Claude Code's shell snapshot sources ~/.bashrc in a login shell
// before a run's first command; Codex runs its commands in login shells):
// one the agent wrote would run, unjudged by the step's engine, in its next
// run (TestRealClaudeRunsNoShellStartupFileAnAgentLeftInItsHOME), or before
// its own later commands. Pinned, they cannot be written, removed or
// renamed over in the run either.
func stageShellStartup(c *Confinement, home, in, blanks string) error {
	for _, name := range shellStartupFiles {
		if err := os.RemoveAll(filepath.Join(home, name)); err != nil {
			return fmt.Errorf("cannot clear %s of the agent's HOME: %w", name, err)
		}
		src, err := blank(blanks, name)
		if err != nil {
			return fmt.Errorf("cannot make an empty %s for the agent's HOME: %w", name, err)
		}
		c.Pinned = append(c.Pinned, Bind{Src: src, Dst: filepath.Join(in, name)})
	}
	return nil
}

// noGlobalGitConfig is GIT_CONFIG_GLOBAL in a sandboxed run: git reads its
// global config from HOME (~/.gitconfig, ~/.config/git/config), and Claude
// Code runs git status in its working directory as a run starts, so a
// core.fsmonitor (or pager, or alias) the agent set there ran, unjudged, as
// its next run started (TestRealClaudeRunsNoGitConfigAnAgentLeftInItsHOME).
// The user's own global config is not in the sandbox anyway; the
// repository's config still applies.
const noGlobalGitConfig = os.DevNull
