package permissions

import "strings"

// keywords are bash's reserved words that a command may follow (if git
// push; then git push; fi, ! git push, coproc git push): the command is
// what comes after.
var keywords = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true,
	"until": true, "!": true, "coproc": true}

// runner reads the words after a program that runs another: the command
// words that follow (to unwrap further), or a command line it runs (line),
// or neither (nil: what it runs is not on the line). fromInput tells that
// its input adds to what runs (parallel reading its commands' words).
type runner func(args []string) (rest []string, line string, fromInput bool)

// runners are the programs that run a command given to them in a way the
// wrappers' table cannot say: a lock file or a priority before it, a -c
// line among the options, words joined into a shell line.
var runners = map[string]runner{
	// flock [opts] file command… | flock [opts] file -c line
	"flock": afterOperand(map[string]bool{"-w": true, "--wait": true, "--timeout": true, "-E": true, "--conflict-exit-code": true}, "-c", "--command"),
	// chrt [opts] priority command…; chrt -p names a process, no command
	"chrt": afterOperand(map[string]bool{"-T": true, "-P": true, "-D": true, "-p": true, "--pid": true}, "", ""),
	// taskset [opts] mask command…; taskset -p names a process
	"taskset": afterOperand(map[string]bool{"-p": true, "--pid": true}, "", ""),
	// busybox applet args…: busybox sh -c line, busybox env git push
	"busybox": func(args []string) ([]string, string, bool) {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return nil, "", false
		}
		return args, "", false
	},
	// script [opts] [file]: -c line runs it; without one, an interactive
	// shell reads the input (not on the line).
	"script": func(args []string) ([]string, string, bool) {
		return nil, optionLine(args, 'c', "--command"), false
	},
	// watch [opts] command…: its words joined, run by sh -c, over and
	// over; with -x (--exec) run as they are, each word one
	"watch": func(args []string) ([]string, string, bool) {
		valued := map[string]bool{"-n": true, "--interval": true, "-q": true, "--equexit": true}
		exec := false
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			if args[0] == "--" {
				args = args[1:]
				break
			}
			exec = exec || args[0] == "--exec" || !strings.HasPrefix(args[0], "--") && strings.Contains(args[0], "x")
			if valued[args[0]] && len(args) > 1 {
				args = args[1:]
			}
			args = args[1:]
		}
		if exec {
			return nil, commandLine(args), false
		}
		return nil, strings.Join(args, " "), false
	},
	// trap [--] action signal…: bash runs the action's line on the signal
	"trap": func(args []string) ([]string, string, bool) {
		for len(args) > 0 && (args[0] == "-p" || args[0] == "-l" || args[0] == "-P") {
			args = args[1:]
		}
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) < 2 || args[0] == "-" {
			return nil, "", false
		}
		return nil, args[0], false
	},
	"parallel": parallel,
}

// readBudget is how many bytes of lines a runner may make from its words
// args, each a copy of some of them (parallel's command with each source,
// a loose runner's words from each candidate on): a few times their own
// length, so a line is read in time linear in its length, and a floor so
// that a short command with many operands is read whole. Past it, what
// runs is opaque: asked, never allowed unread.
func readBudget(args []string) int {
	n := 0
	for _, a := range args {
		n += len(a) + 1
	}
	return 4*n + 256
}

// afterOperand is a runner whose command follows its options and one
// operand (flock's lock file, chrt's priority, taskset's mask), or whose
// option lineOpt (long, its long form) gives a line instead. A value-taking
// option of valued is skipped with its value; -p (a process, not a
// command) means nothing runs.
func afterOperand(valued map[string]bool, lineOpt, long string) runner {
	return func(args []string) ([]string, string, bool) {
		operand := false
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case lineOpt != "" && (a == lineOpt || a == long) && i+1 < len(args):
				return nil, args[i+1], false
			case a == "-p" || a == "--pid":
				return nil, "", false
			case a == "--":
				if i+1 < len(args) && operand {
					return args[i+1:], "", false
				}
			case strings.HasPrefix(a, "-") && len(a) > 1:
				if valued[a] {
					i++
				}
			case !operand:
				operand = true
			default:
				return args[i:], "", false
			}
		}
		return nil, "", false
	}
}

// optionLine is the value of a short option c (alone, in a group -qc, or
// joined -cLINE) or its long form (--command LINE, --command=LINE), "".
func optionLine(args []string, c byte, long string) string {
	for i, a := range args {
		switch {
		case a == long && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, long+"="):
			return a[len(long)+1:]
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			if k := strings.IndexByte(a, c); k > 0 {
				if k+1 < len(a) {
					return a[k+1:]
				}
				if i+1 < len(args) {
					return args[i+1]
				}
			}
		}
	}
	return ""
}

// shellLine is the line a shell's -c runs: its first word after the
// options, wherever among them -c came (bash -c -e 'line', bash -euo
// pipefail -c 'line'); ok is false when no -c was given.
func shellLine(args []string) (line string, ok bool) {
	c := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			if c && i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		case shellValued[a]:
			i++
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if a[0] == '-' && strings.Contains(a, "c") {
				c = true
			}
			if strings.ContainsAny(a[1:], "oO") && i+1 < len(args) {
				i++ // -euo pipefail: o's value is the next word
			}
		default:
			return a, c
		}
	}
	return "", false
}

// looseRunners run the command that follows their options, whose options
// are not listed here one by one (strace -o FILE, unshare -r, chroot DIR):
// any word that is not an option may be the program, and each is read as
// where a command begins, within readBudget.
var looseRunners = []string{"strace", "ltrace", "valgrind", "setpriv", "prlimit", "fakeroot", "faketime", "unshare",
	"runuser", "chroot", "nsenter", "eatmydata", "firejail", "torsocks", "proxychains", "proxychains4", "xvfb-run",
	"dbus-run-session", "numactl", "cgexec", "catchsegv", "systemd-run", "gdb", "unbuffer", "caffeinate", "sg", "bwrap"}

func init() {
	for _, r := range looseRunners {
		runners[r] = func(args []string) ([]string, string, bool) {
			var lines []string
			budget := readBudget(args)
			for i := 0; i < len(args); i++ {
				if args[i] == "--" {
					if i+1 < len(args) {
						lines = append(lines, commandLine(args[i+1:]))
					}
					break
				}
				if !strings.HasPrefix(args[i], "-") {
					// Every value of an option is a candidate (strace -e X
					// -o F -s 100 git push): a fixed count of them
					// let padding push the program past the reading.
					line := commandLine(args[i:])
					if budget -= len(line); budget < 0 {
						return nil, strings.Join(lines, "\n"), true
					}
					lines = append(lines, line)
				}
			}
			return nil, strings.Join(lines, "\n"), false
		}
	}
}

// linked is what ln or cp (install) makes of a single source: the path
// it makes, dst, and the source it links to or copies.
func linked(words []string) (src, dst string, ok bool) {
	switch base(words[0]) {
	case "ln", "cp", "install":
	default:
		return "", "", false
	}
	var ops []string
	for _, w := range words[1:] {
		if !strings.HasPrefix(w, "-") {
			ops = append(ops, w)
		}
	}
	if len(ops) != 2 {
		return "", "", false
	}
	return ops[0], ops[1], true
}
