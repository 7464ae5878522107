package permissions

import "strings"

// A best-effort reading of a shell command line: enough to tell which
// programs it runs, what it pipes into what and where it redirects output.
// It understands quotes, ; && || & | and newlines, > >> redirections,
// $(…), `…` and <(…) (their insides are read as commands too), and the
// wrappers that run another program (sudo, env, nohup, time, nice, timeout,
// bash -c, eval). It is not a shell: a command can hide what it does (a
// script it wrote, a variable it expands), which is why the sandbox, not
// this, is what confines a command.

// stage is one program of a pipeline: its words (wrappers removed) and the
// files its output is redirected to.
type stage struct {
	words []string
	out   []string
	// priv names the wrapper that raised the program's privilege (sudo,
	// doas, pkexec, su), however it was spelled; "" when none did.
	priv string
}

type pipeline []stage

// parsed is a command line read: its pipelines, and the inner command lines
// ($(…), `…`, <(…), bash -c '…', eval …) to read in turn.
type parsed struct {
	pipelines []pipeline
	inner     []string
}

func parseShell(cmd string) parsed {
	var (
		p     parsed
		pl    pipeline
		st    stage
		word  strings.Builder
		inw   bool
		redir bool // the next word is a redirection's target
	)
	endWord := func() {
		if !inw {
			return
		}
		w := word.String()
		word.Reset()
		inw = false
		if redir {
			redir = false
			if !strings.HasPrefix(w, "&") { // >&2 duplicates a descriptor
				st.out = append(st.out, w)
			}
			return
		}
		st.words = append(st.words, w)
	}
	endStage := func() {
		endWord()
		if len(st.words) > 0 || len(st.out) > 0 {
			pl = append(pl, st)
		}
		st = stage{}
	}
	endPipeline := func() {
		endStage()
		if len(pl) > 0 {
			p.pipelines = append(p.pipelines, pl)
		}
		pl = nil
	}
	rs := []rune(cmd)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\' && i+1 < len(rs) && rs[i+1] == '\n':
			i++ // a line continuation: the shell removes both
		case c == '\\' && i+1 < len(rs):
			i++
			word.WriteRune(rs[i])
			inw = true
		case c == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			word.WriteString(string(rs[i+1 : min(j, len(rs))]))
			inw = true
			i = j
		case c == '"':
			j := i + 1
			for j < len(rs) && rs[j] != '"' {
				if rs[j] == '\\' {
					j++
				} else if rs[j] == '$' && j+1 < len(rs) && rs[j+1] == '(' {
					end := closing(rs, j+1)
					p.inner = append(p.inner, string(rs[j+2:end]))
					j = end
				}
				j++
			}
			word.WriteString(string(rs[i+1 : min(j, len(rs))]))
			inw = true
			i = j
		case (c == '$' || c == '<') && i+1 < len(rs) && rs[i+1] == '(':
			end := closing(rs, i+1)
			p.inner = append(p.inner, string(rs[i+2:end]))
			word.WriteString(string(rs[i:min(end+1, len(rs))]))
			inw = true
			i = end
		case c == '`':
			j := i + 1
			for j < len(rs) && rs[j] != '`' {
				j++
			}
			p.inner = append(p.inner, string(rs[i+1:min(j, len(rs))]))
			inw = true
			i = j
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n' || c == ';':
			endPipeline()
		case c == '&':
			if i+1 < len(rs) && rs[i+1] == '&' {
				i++
			} else if i+1 < len(rs) && rs[i+1] == '>' { // &> file
				endWord()
				i++
				if i+1 < len(rs) && rs[i+1] == '>' {
					i++
				}
				redir = true
				continue
			}
			endPipeline()
		case c == '|':
			if i+1 < len(rs) && rs[i+1] == '|' {
				i++
				endPipeline()
			} else {
				endStage()
			}
		case c == '>':
			// 2> and 1> name a descriptor, not a word.
			if inw && allDigits(word.String()) {
				word.Reset()
				inw = false
			}
			endWord()
			if i+1 < len(rs) && (rs[i+1] == '>' || rs[i+1] == '|') {
				i++
			}
			if i+1 < len(rs) && rs[i+1] == '&' { // >&2 duplicates a descriptor
				i++
				for i+1 < len(rs) && (rs[i+1] == '-' || (rs[i+1] >= '0' && rs[i+1] <= '9')) {
					i++
				}
				continue
			}
			redir = true
		case c == '(' || c == ')':
			endPipeline()
		case (c == '{' || c == '}') && !inw && (c == '}' || i+1 == len(rs) || strings.ContainsRune(" \t\n", rs[i+1])):
			// A group's braces are words of their own; {} and -I{} are
			// arguments (find -exec rm {} ;).
			endPipeline()
		default:
			word.WriteRune(c)
			inw = true
		}
	}
	endPipeline()
	for _, pl := range p.pipelines {
		for i := range pl {
			var inner []string
			pl[i].words, inner, pl[i].priv = unwrap(pl[i].words)
			p.inner = append(p.inner, inner...)
		}
	}
	return p
}

// closing is the index of the ')' that closes the '(' at open.
func closing(rs []rune, open int) int {
	depth := 0
	for j := open; j < len(rs); j++ {
		switch rs[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(rs)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// shells are the programs that run a command line given to them.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true}

// wrappers run the program named after their options; each maps the
// options that take the next word as their value (sudo -u me, env -u VAR,
// timeout -s KILL), so that value is not taken for the program.
var wrappers = map[string]map[string]bool{
	"sudo": {"-u": true, "-g": true, "-h": true, "-p": true, "-C": true, "-D": true, "-r": true, "-t": true, "-U": true, "-T": true, "-R": true,
		"--user": true, "--group": true, "--host": true, "--prompt": true, "--close-from": true, "--chdir": true, "--role": true,
		"--type": true, "--other-user": true, "--command-timeout": true, "--chroot": true},
	"doas":    {"-u": true, "-C": true},
	"env":     {"-u": true, "--unset": true, "-C": true, "--chdir": true},
	"nohup":   {},
	"time":    {"-f": true, "--format": true, "-o": true, "--output": true},
	"exec":    {"-a": true},
	"command": {},
	"builtin": {},
	"stdbuf":  {"-i": true, "-o": true, "-e": true, "--input": true, "--output": true, "--error": true},
	"setsid":  {},
	"pkexec":  {"--user": true},
	"nice":    {"-n": true, "--adjustment": true},
	"ionice":  {"-c": true, "-n": true, "-p": true, "-P": true, "-u": true, "--class": true, "--classdata": true},
	"timeout": {"-s": true, "--signal": true, "-k": true, "--kill-after": true},
	"xargs": {"-a": true, "--arg-file": true, "-d": true, "--delimiter": true, "-E": true, "-I": true, "-L": true, "--max-lines": true,
		"-n": true, "--max-args": true, "-P": true, "--max-procs": true, "-s": true, "--max-chars": true, "--process-slot-var": true},
}

// raisers are the programs that run another with raised privilege.
var raisers = map[string]bool{"sudo": true, "doas": true, "pkexec": true, "su": true}

// unwrap drops the wrappers in front of the program a stage runs (variable
// assignments, sudo, env, nohup, xargs, …) and returns the command lines a
// shell's -c, su -c, eval, env -S or find -exec would run, to be read as
// commands too, and the wrapper that raised privilege, if one did.
func unwrap(words []string) (_ []string, inner []string, priv string) {
	for len(words) > 0 {
		w := base(words[0])
		valued, wrapper := wrappers[w]
		if raisers[w] {
			priv = w
		}
		switch {
		case strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "="):
			words = words[1:]
		case wrapper:
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=")) {
				opt := words[0]
				if opt == "--" {
					words = words[1:]
					break
				}
				if w == "env" && (opt == "-S" || opt == "--split-string" || strings.HasPrefix(opt, "-S") || strings.HasPrefix(opt, "--split-string=")) {
					// env -S 'prog args' runs a command line of its own.
					line := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(opt, "--split-string"), "-S"), "=")
					rest := words[1:]
					if line == "" && len(rest) > 0 {
						line, rest = rest[0], rest[1:]
					}
					return words, []string{strings.Join(append([]string{line}, rest...), " ")}, priv
				}
				if valued[opt] && len(words) > 1 {
					words = words[1:]
				}
				words = words[1:]
			}
			if w == "timeout" && len(words) > 0 {
				words = words[1:] // the duration
			}
		case w == "eval":
			return words, []string{strings.Join(words[1:], " ")}, priv
		case w == "find":
			return words, findExec(words[1:]), priv
		case w == "su":
			for i := 1; i+1 < len(words); i++ {
				if words[i] == "-c" || words[i] == "--command" {
					return words, []string{words[i+1]}, priv
				}
			}
			return words, nil, priv
		case shells[w]:
			for i := 1; i+1 < len(words); i++ {
				if strings.HasPrefix(words[i], "-") && strings.Contains(words[i], "c") && !strings.HasPrefix(words[i], "--") {
					return words, []string{words[i+1]}, priv
				}
			}
			return words, nil, priv
		default:
			return words, nil, priv
		}
	}
	return words, nil, priv
}

// findExec is the commands find's -exec, -execdir, -ok and -okdir run:
// the words after each, to its ; or +.
func findExec(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if j > i+1 {
				out = append(out, strings.Join(args[i+1:j], " "))
			}
			i = j
		}
	}
	return out
}

// base is a program's name without its directory: /usr/bin/rm is rm.
func base(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}

// segments is every stage's words of a command line, inner ones included,
// as pipelines.
func segments(cmd string) []pipeline {
	var out []pipeline
	walk(cmd, 0, func(pl pipeline) { out = append(out, pl) })
	return out
}

// walk calls fn on every pipeline of a command line and of the command
// lines inside it, to a depth of 8.
func walk(cmd string, depth int, fn func(pipeline)) {
	if depth > 8 {
		return
	}
	p := parseShell(cmd)
	for _, pl := range p.pipelines {
		fn(pl)
	}
	for _, in := range p.inner {
		walk(in, depth+1, fn)
	}
}
