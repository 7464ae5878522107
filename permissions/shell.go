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
		case c == '(' || c == ')' || c == '{' || c == '}':
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
			pl[i].words, inner = unwrap(pl[i].words)
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

// unwrap drops the wrappers in front of the program a stage runs (variable
// assignments, sudo, env, nohup, …) and returns the command lines a shell's
// -c or eval would run, to be read as commands too.
func unwrap(words []string) ([]string, []string) {
	for len(words) > 0 {
		w := base(words[0])
		switch {
		case strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "="):
			words = words[1:]
		case w == "sudo" || w == "doas" || w == "env" || w == "nohup" || w == "time" || w == "exec" || w == "command" || w == "builtin" || w == "stdbuf" || w == "setsid":
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=")) {
				words = words[1:]
			}
		case w == "nice" || w == "ionice":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				if words[0] == "-n" && len(words) > 1 {
					words = words[1:]
				}
				words = words[1:]
			}
		case w == "timeout":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				words = words[1:]
			}
			if len(words) > 0 {
				words = words[1:] // the duration
			}
		case w == "eval":
			return words, []string{strings.Join(words[1:], " ")}
		case shells[w]:
			for i := 1; i+1 < len(words); i++ {
				if strings.HasPrefix(words[i], "-") && strings.Contains(words[i], "c") && !strings.HasPrefix(words[i], "--") {
					return words, []string{words[i+1]}
				}
			}
			return words, nil
		default:
			return words, nil
		}
	}
	return words, nil
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
