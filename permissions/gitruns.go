package permissions

import "strings"

// What git runs that its words name: the command lines its settings give
// it (-c, --config-env, git config, the environment a command is given),
// and those its own commands run (rebase -x, submodule foreach, …).

// commandValued are the environment variables whose value the program
// after them runs as a command (GIT_PAGER='…' git log, EDITOR=… git
// commit): it is read as a line.
var commandValued = map[string]bool{"GIT_PAGER": true, "PAGER": true, "GIT_EDITOR": true, "EDITOR": true, "VISUAL": true,
	"GIT_SEQUENCE_EDITOR": true, "GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_PROXY_COMMAND": true, "MANPAGER": true}

// gitSettingLines are the command lines git's own -c settings give it to
// run (core.fsmonitor, diff.external, core.pager, a filter's smudge, a
// credential helper's !line, …), read as lines. opaque tells that a
// --config-env gives such a setting an environment variable's value,
// which the line need not hold (an export earlier, the agent's own).
func gitSettingLines(args []string) (out []string, opaque bool) {
	for i := 0; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		kv, fromEnv := "", false
		switch {
		case args[i] == "-c" && i+1 < len(args):
			kv = args[i+1]
		case strings.HasPrefix(args[i], "-c") && len(args[i]) > 2:
			kv = args[i][2:]
		case args[i] == "--config-env" && i+1 < len(args):
			kv, fromEnv = args[i+1], true
		case strings.HasPrefix(args[i], "--config-env="):
			kv, fromEnv = strings.TrimPrefix(args[i], "--config-env="), true
		}
		if k, v, ok := strings.Cut(kv, "="); ok && gitRunsValue(strings.ToLower(k)) {
			switch {
			case fromEnv:
				opaque = true
			case !sshTransport(strings.ToLower(k), v):
				out = append(out, strings.TrimPrefix(v, "!"))
			}
		}
		if gitValued[args[i]] {
			i++
		}
	}
	return out, opaque
}

// sshTransport tells that a setting (core.sshcommand, GIT_SSH_COMMAND, …)
// names plain ssh with its options as git's transport: git adds the host
// from the remote it was asked to reach, so the line names none and would
// read as ssh to an unknown host, while the fetch or push it serves is
// read as git's own. Anything more (a ; or $ in it, another program, an
// -o ProxyCommand or LocalCommand ssh itself runs) is read as a line.
func sshTransport(key, value string) bool {
	switch {
	case key == "git_ssh_command" || key == "git_ssh" || strings.HasSuffix(key, "sshcommand"):
	default:
		return false
	}
	f := strings.Fields(value)
	return len(f) > 0 && base(f[0]) == "ssh" && !strings.ContainsAny(value, ";&|`$()<>\n\\'\"#") &&
		!strings.Contains(strings.ToLower(value), "command")
}

// gitRunsValue tells whether git runs a setting's value as a command.
func gitRunsValue(key string) bool {
	switch key {
	case "core.pager", "core.editor", "core.fsmonitor", "core.sshcommand", "core.askpass", "core.gitproxy",
		"sequence.editor", "diff.external", "credential.helper", "gpg.program", "interactive.difffilter",
		"sendemail.sendmailcmd", "sendemail.tocmd", "sendemail.cccmd", "uploadpack.packobjectshook", "web.browser":
		return true
	}
	if strings.HasPrefix(key, "pager.") {
		return true
	}
	for _, suffix := range []string{".command", ".cmd", ".textconv", ".driver", ".clean", ".smudge", ".process",
		".program", ".helper", ".sshcommand", ".receivepack", ".uploadpack"} {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return false
}

// gitRunLines are the command lines git's own commands run from their
// words: rebase --exec, submodule foreach, bisect run, filter-branch's
// filters, difftool --extcmd, and the git command for-each-repo runs in
// each repository. args are git's words from its subcommand on.
func gitRunLines(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	valued := map[string][]string{
		"rebase":        {"-x", "--exec"},
		"difftool":      {"-x", "--extcmd"},
		"filter-branch": {"--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter", "--commit-filter", "--tag-name-filter"},
		"send-email":    {"--to-cmd", "--cc-cmd", "--sendmail-cmd"},
	}[args[0]]
	var out []string
	rest := args[1:]
	for i, a := range rest {
		for _, opt := range valued {
			if a == opt && i+1 < len(rest) {
				out = append(out, rest[i+1])
			} else if v, ok := strings.CutPrefix(a, opt+"="); ok && strings.HasPrefix(opt, "--") {
				out = append(out, v)
			} else if v, ok := strings.CutPrefix(a, opt); ok && v != "" && !strings.HasPrefix(opt, "--") {
				out = append(out, v) // -x'line': git takes a short option's value joined
			}
		}
	}
	after := func(word string) []string { // the words after word and the options that follow it
		for i, a := range rest {
			if a == word {
				w := rest[i+1:]
				for len(w) > 0 && strings.HasPrefix(w[0], "-") {
					w = w[1:]
				}
				return w
			}
		}
		return nil
	}
	switch args[0] {
	case "config":
		// git config [set] KEY VALUE: a value git runs, or a shell alias
		var pos []string
		for i := 0; i < len(rest); i++ {
			switch a := rest[i]; {
			case a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" || a == "--comment" || a == "--value":
				i++
			case !strings.HasPrefix(a, "-"):
				pos = append(pos, a)
			}
		}
		if len(pos) > 0 && pos[0] == "set" {
			pos = pos[1:]
		}
		if len(pos) >= 2 {
			k := strings.ToLower(pos[0])
			if gitRunsValue(k) || strings.HasPrefix(k, "alias.") && strings.HasPrefix(pos[1], "!") {
				out = append(out, strings.TrimPrefix(pos[1], "!"))
			}
		}
	case "submodule":
		if w := after("foreach"); len(w) > 0 {
			out = append(out, commandLine(w)) // its first word a shell's text, the rest its arguments
		}
	case "bisect":
		if w := after("run"); len(w) > 0 {
			out = append(out, commandLine(w))
		}
	case "for-each-repo":
		w := rest
		for len(w) > 0 && strings.HasPrefix(w[0], "-") {
			w = w[1:]
		}
		if len(w) > 0 {
			out = append(out, commandLine(append([]string{"git"}, w...)))
		}
	}
	return out
}
