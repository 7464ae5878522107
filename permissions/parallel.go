package permissions

import "strings"

// parallel reads GNU parallel [opts] command… ::: arg…: the command with
// each argument added, or each argument a command; without ::: its input
// adds them. parallel has a shell run the command's words joined with
// spaces and the argument quoted as one word (sh -c ::: 'git push' runs
// the push); -q quotes the command's words too.
func parallel(args []string) ([]string, string, bool) {
	quote := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		opt := args[0]
		switch {
		case parallelFlags[opt]:
			quote = quote || opt == "-q" || opt == "--quote"
		case opt == "--arg-sep" || opt == "--arg-file-sep" || strings.HasPrefix(opt, "--arg-sep=") || strings.HasPrefix(opt, "--arg-file-sep="):
			return nil, "", true // its sources no longer begin at :::
		case parallelValued[opt] && len(args) > 1:
			args = args[1:]
		case strings.HasPrefix(opt, "--") && strings.Contains(opt, "="),
			len(opt) > 2 && opt[1] != '-' && parallelValued[opt[:2]]: // --jobs=4, -j4
		default:
			// an option not listed may take the next word: what runs is
			// not known
			return nil, "", true
		}
		args = args[1:]
	}
	cmd, srcs := args, []string(nil)
	for i, a := range args {
		if strings.HasPrefix(a, ":::") {
			cmd, srcs = args[:i], args[i+1:]
			break
		}
	}
	if srcs == nil {
		if len(cmd) == 0 || base(cmd[0]) == "git" && len(gitArgs(cmd[1:])) == 0 {
			return cmd, "", true
		}
		return cmd, "", false
	}
	// The command with each source: past the budget, the command with its
	// sources is opaque, so a long one is not copied for each, while many
	// files after a short command are all read.
	var lines []string
	budget := readBudget(args)
	for _, a := range srcs {
		if !strings.HasPrefix(a, ":::") {
			line := a // no command: each source is a line of its own
			switch {
			case quote:
				line = commandLine(append(append([]string(nil), cmd...), a))
			case len(cmd) > 0:
				line = strings.Join(cmd, " ") + " " + quotedWord(a)
			}
			if budget -= len(line); budget < 0 {
				return nil, strings.Join(lines, "\n"), true
			}
			lines = append(lines, line)
		}
	}
	return nil, strings.Join(lines, "\n"), false
}

// parallelValued are GNU parallel's options that take the next word.
var parallelValued = map[string]bool{"-j": true, "--jobs": true, "-P": true, "--max-procs": true, "-a": true,
	"--arg-file": true, "-S": true, "--sshlogin": true, "--sshloginfile": true, "--slf": true, "-n": true,
	"--max-args": true, "-N": true, "-L": true, "--max-lines": true, "-d": true, "--delimiter": true, "-C": true,
	"--colsep": true, "-E": true, "--eof": true, "--results": true, "--res": true, "--joblog": true, "--timeout": true,
	"--retries": true, "--delay": true, "--tmpdir": true, "--workdir": true, "--wd": true, "--tagstring": true,
	"--tag-string": true, "--load": true, "--memfree": true, "--halt": true, "--halt-on-error": true, "--env": true, "--basefile": true,
	"--bf": true, "--return": true, "--transferfile": true, "--tf": true, "--nice": true, "--termseq": true}

// parallelFlags are GNU parallel's options that take no value.
var parallelFlags = map[string]bool{"-k": true, "--keep-order": true, "-q": true, "--quote": true, "-v": true,
	"--verbose": true, "--bar": true, "--progress": true, "--eta": true, "--dry-run": true, "--dryrun": true, "-u": true,
	"--ungroup": true, "--line-buffer": true, "--lb": true, "--group": true, "--tag": true, "-0": true, "--null": true,
	"-X": true, "-m": true, "--xargs": true, "--shuf": true, "--will-cite": true, "--no-notice": true, "-t": true,
	"--pipe": true, "--files": true, "-r": true, "--no-run-if-empty": true}
