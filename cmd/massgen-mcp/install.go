package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/mcp/install"
)

type installFlags struct {
	scope   string
	skills  bool
	dryRun  bool
	force   bool
	command string
}

func installCommand() *cobra.Command {
	return clientCommand("install", "Register massgen-mcp in an MCP client's configuration (and copy the skills with --skills)",
		`Register the massgen server in a client's configuration:

  claude-code  user: ~/.claude.json (or $CLAUDE_CONFIG_DIR)   project: ./.mcp.json
  codex        user: ~/.codex/config.toml (or $CODEX_HOME)    project: ./.codex/config.toml
  cursor       user: ~/.cursor/mcp.json                       project: ./.cursor/mcp.json
  vscode       user: VS Code's user mcp.json                  project: ./.vscode/mcp.json
               (under $VSCODE_PORTABLE or $VSCODE_APPDATA when set)
  gemini       user: ~/.gemini/settings.json                  project: ./.gemini/settings.json
               (or $GEMINI_CLI_HOME/.gemini/settings.json)

It merges with what is there (other servers, comments and formatting stay),
changes nothing when the entry is already right, and prints every file it
touched. A massgen entry it did not write (your own) stays: install refuses and
shows it; --force replaces it, and uninstall puts it back. A symlinked config is
written through the link. It never approves a project-scoped server for you and never writes a
key's value: Codex gets the names of the provider variables set now (env_vars),
Cursor and VS Code ${env:NAME} references, Gemini CLI ${NAME} references (it
withholds key-like variables otherwise), Claude Code passes its environment;
~/.env works for all. With --skills it also copies the team-run, massgen-run and
checkpoint skills where the client loads them (a skill file it did not write, your
own or one you edited, stays unless --force). uninstall undoes it.

The entry runs massgen-mcp from PATH when this binary is the one there, and in a
project's file (shared with the repository) whenever PATH has one; otherwise
this binary's absolute path, and install says so. --server-command sets it.

For Claude Code, pick the massgen plugin or this entry, not both: install
refuses while the plugin is enabled (two identical servers) and says how to
switch; --force installs beside it anyway.`,
		func(o install.Options, note string) (*install.Report, error) {
			rep, err := install.Install(o)
			if err == nil && note != "" {
				rep.Notes = append(rep.Notes, note)
			}
			return rep, err
		})
}

func uninstallCommand() *cobra.Command {
	return clientCommand("uninstall", "Remove massgen-mcp from an MCP client's configuration (and its skills with --skills)",
		`Undo install: a file install created and nobody changed since is deleted; a file
it changed and nobody touched since is restored byte for byte; otherwise only the
massgen entry (and, with --skills, the skill files as installed) are removed —
or, where install --force replaced your own entry, that entry is put back; an
entry changed since install is yours and stays.`,
		func(o install.Options, _ string) (*install.Report, error) { return install.Uninstall(o) })
}

func clientCommand(name, short, long string, run func(o install.Options, commandNote string) (*install.Report, error)) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:       name + " <" + strings.Join(install.Clients, "|") + "> [--scope project|user] [--skills] [--dry-run]" + map[bool]string{true: " [--force]"}[name == "install"],
		Short:     short,
		Long:      long,
		Args:      cobra.ExactArgs(1),
		ValidArgs: install.Clients,
		Example: `  massgen-mcp ` + name + ` claude-code
  massgen-mcp ` + name + ` codex --skills
  massgen-mcp ` + name + ` cursor --scope project --dry-run
  massgen-mcp ` + name + ` gemini --skills`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, note, err := installOptions(f, args[0])
			if err != nil {
				return err
			}
			rep, err := run(o, note)
			if err != nil {
				return fmt.Errorf("%w: %s %s: %w", coordination.ErrBadInput, name, args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s scope):\n%s", name, rep.Client, rep.Scope, rep)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scope, "scope", install.ScopeUser, "user (every project) or project (this directory, shared with the repository)")
	fl.BoolVar(&f.skills, "skills", false, "also copy (or remove) the skills where the client loads them")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would change and write nothing")
	fl.BoolVar(&f.force, "force", false, "replace a massgen entry massgen-mcp did not write (uninstall puts it back), or install into Claude Code beside the enabled massgen plugin")
	fl.StringVar(&f.command, "server-command", "", "the command the client runs (default massgen-mcp when this binary is the one on PATH, or in a project's file whenever PATH has one; else this binary's absolute path)")
	if name == "uninstall" {
		// uninstall ignores both (it undoes what install recorded), so its
		// help does not offer them; they are still accepted, so a script
		// that passes install's flags to both keeps working.
		_ = fl.MarkHidden("force")
		_ = fl.MarkHidden("server-command")
	}
	return cmd
}

// installOptions are the options for a client, and a note on the command
// the entry runs when the output should say why it is that one.
func installOptions(f installFlags, client string) (install.Options, string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return install.Options{}, "", fmt.Errorf("%w: cannot find your home directory: %w", coordination.ErrBadInput, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return install.Options{}, "", err
	}
	command, note := f.command, ""
	if command == "" {
		command, note = serverCommand(f.scope)
	}
	return install.Options{Client: client, Scope: f.scope, Skills: f.skills, DryRun: f.dryRun, Force: f.force, Home: home, Dir: wd,
		Env: os.Getenv, Command: command}, note, nil
}
