package permissions

import (
	"path"
	"slices"
	"strings"
	"unicode"
)

// A best-effort reading of a shell command line: enough to tell which
// programs it runs, what it pipes into what and where it redirects output.
// It understands quotes ($'…' decoded), ; && || & | and newlines, > >> <
// redirections, heredocs and here-strings, $(…), `…`, <(…) and >(…) (their
// insides are read as commands too, a $(…) parsed as bash parses it:
// closing), reserved words before a command (if, then, do, !, …), and the
// wrappers and runners that run another program (sudo, env, nohup, time,
// nice, timeout, bash -c, eval, trap, flock, watch, strace, …: runners.go),
// and what git runs from its settings and its own commands. What it
// cannot read — a shell reading another program's output, a program word
// the shell expands — it marks opaque. It is not a shell: a command can hide
// what it does (a script it wrote and runs by path), which is why the
// sandbox, not this, is what confines a command.

// stage is one program of a pipeline: its words (wrappers removed) and the
// files its output is redirected to.
type stage struct {
	words []string
	out   []string
	// priv names the wrapper that raised the program's privilege (sudo,
	// doas, pkexec, su), however it was spelled; "" when none did.
	priv string
	// in are the files its input is redirected from (< file).
	in []string
	// here is the text of its heredocs and here-strings (<<EOF, <<<).
	here []heredoc
	// opaque tells that what the stage runs cannot be read from the line:
	// a shell reading another program's output, a program word the shell
	// expands, a git subcommand that is not git's own.
	opaque bool
	// dir is where its relative paths resolve, as the cd, pushd and popd
	// before it in its line moved it: "" where the line starts, a path
	// relative to that or absolute, or, after one whose target is not
	// literal (cd $X, cd -, cd ~), unknownDir and the command that moved it.
	dir string
}

// heredoc is a heredoc's or here-string's text; expand tells whether the
// shell expands it (an unquoted delimiter), running its $(…) and `…`.
type heredoc struct {
	text   string
	expand bool
}

// The redirections whose next word parseShell reads.
const (
	redirNone = iota
	redirOut  // > file
	redirIn   // < file
	redirHere // <<< word
)

type pipeline []stage

// parsed is a command line read: its pipelines, and the inner command lines
// ($(…), `…`, <(…), bash -c '…', eval …) to read in turn.
type parsed struct {
	pipelines []pipeline
	inner     []innerLine
}

// innerLine is a command line inside another, and the directory it runs in
// (a stage's dir).
type innerLine struct{ text, dir string }

// parseShell reads cmd, run in dir (a stage's dir: "" where the outermost
// line starts).
func parseShell(cmd, dir string) parsed {
	var (
		p     parsed
		pl    pipeline
		st    stage
		word  strings.Builder
		inw   bool
		redir int // the next word is a redirection's target (redirOut, …)
		cwd   = dir
		dirs  *dirStack  // pushd's
		sub   []dirSaved // the directories a ( saved, which its ) restores
	)
	addInner := func(texts ...string) {
		for _, t := range texts {
			p.inner = append(p.inner, innerLine{t, cwd})
		}
	}
	endWord := func() {
		if !inw {
			return
		}
		w := word.String()
		word.Reset()
		inw = false
		switch redir {
		case redirOut:
			redir = redirNone
			if !strings.HasPrefix(w, "&") && !strings.HasPrefix(w, ">(") { // >&2 duplicates a descriptor; > >(…) writes to a line run
				st.out = append(st.out, w)
			}
			return
		case redirIn:
			redir = redirNone
			st.in = append(st.in, w)
			return
		case redirHere:
			redir = redirNone
			st.here = append(st.here, heredoc{text: w})
			return
		}
		st.words = append(st.words, w)
	}
	endStage := func() {
		endWord()
		if len(st.words) > 0 || len(st.out) > 0 {
			st.dir = cwd
			pl = append(pl, st)
		}
		st = stage{}
	}
	// endPipeline ends a pipeline at its separator sep: a lone cd, pushd
	// or popd moves the directory for what follows, except run in the
	// background (&), in a subshell of its own; before || what follows
	// runs where it failed or not at all, so the directory is unknown.
	endPipeline := func(sep rune) {
		endStage()
		if len(pl) == 1 && sep != '&' {
			cwd, dirs = chdir(pl[0].words, cwd, dirs)
			if sep == '|' && cwd != pl[0].dir {
				cwd = unknownDir + strings.Join(pl[0].words, " ") + " ||)"
			}
		}
		if len(pl) > 0 {
			p.pipelines = append(p.pipelines, pl)
		}
		pl = nil
	}
	rs := []rune(cmd)
	noNL := len(rs) // where the line has no newline left, as cutHeredoc found
	cut := cutBodies{nl: -1}
	i := 0
	// fit readies a scan from i that ends where end says: one that would
	// run past a line whose heredocs' bodies are left in place sees, as
	// the shell does, the line go on after them (cutBodies).
	fit := func(end func(rs []rune) int) {
		if cut.nl >= 0 && end(rs[:cut.nl+1]) >= cut.nl+1 {
			i = cut.settle(rs, i)
		}
	}
	for ; ; i++ {
		if cut.nl >= 0 && i > cut.nl { // past the line: on after its bodies
			i += cut.end - cut.nl - 1
			cut.nl = -1
		}
		if i >= len(rs) {
			break
		}
		c := rs[i]
		switch {
		case c == '\\' && i+1 < len(rs) && rs[i+1] == '\n':
			i++ // a line continuation: the shell removes both
		case c == '\\' && i+1 < len(rs):
			i++
			word.WriteRune(rs[i])
			inw = true
		case c == '\'':
			fit(func(rs []rune) int { return quoteEnd(rs, i+1, '\'') })
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			word.WriteString(string(rs[i+1 : min(j, len(rs))]))
			inw = true
			i = j
		case c == '$' && i+1 < len(rs) && rs[i+1] == '\'':
			// $'…' is ANSI-C quoting, static: $'\x67it' is git.
			fit(func(rs []rune) int { return ansiEnd(rs, i+2) })
			j := i + 2
			for j < len(rs) && rs[j] != '\'' {
				if rs[j] == '\\' {
					j++
				}
				j++
			}
			word.WriteString(ansiC(rs[i+2 : min(j, len(rs))]))
			inw = true
			i = j
		case c == '$' && i+1 < len(rs) && rs[i+1] == '"':
			inw = true // $"…" is a double-quoted word, translated
		case c == '"':
			fit(func(rs []rune) int { return dquoteEnd(rs, i+1) })
			j := i + 1
			for j < len(rs) && rs[j] != '"' {
				if rs[j] == '\\' {
					j++
				} else if rs[j] == '$' && j+1 < len(rs) && rs[j+1] == '(' {
					end := closing(rs, j+1)
					addInner(string(rs[j+2 : end]))
					j = end
				} else if rs[j] == '`' {
					end := backtickEnd(rs, j+1)
					addInner(backtickLine(rs[j+1:end], true))
					j = end
				}
				j++
			}
			word.WriteString(string(rs[i+1 : min(j, len(rs))]))
			inw = true
			i = j
		case (c == '$' || c == '<' || c == '>') && i+1 < len(rs) && rs[i+1] == '(':
			// $(…), and <(…) and >(…), a process substitution: their lines run.
			fit(func(rs []rune) int { return closing(rs, i+1) })
			end := closing(rs, i+1)
			addInner(string(rs[i+2 : end]))
			word.WriteString(string(rs[i:min(end+1, len(rs))]))
			inw = true
			i = end
		case c == '`':
			fit(func(rs []rune) int { return backtickEnd(rs, i+1) })
			j := backtickEnd(rs, i+1)
			addInner(backtickLine(rs[i+1:j], false))
			word.WriteString(string(rs[i:min(j+1, len(rs))])) // kept: it is expanded
			inw = true
			i = j
		case c == '#' && !inw:
			// A comment, to its line's end: bash reads no quote in it (#
			// it's done), and runs the next line.
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n' || c == ';':
			endPipeline(';')
		case c == '&':
			if i+1 < len(rs) && rs[i+1] == '&' {
				i++
			} else if i+1 < len(rs) && rs[i+1] == '>' { // &> file
				endWord()
				i++
				if i+1 < len(rs) && rs[i+1] == '>' {
					i++
				}
				redir = redirOut
				continue
			} else {
				endPipeline('&')
				continue
			}
			endPipeline(';')
		case c == '|':
			if i+1 < len(rs) && rs[i+1] == '|' {
				i++
				endPipeline('|')
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
			redir = redirOut
		case c == '<':
			if inw && allDigits(word.String()) { // 0< names a descriptor
				word.Reset()
				inw = false
			}
			endWord()
			switch {
			case strings.HasPrefix(string(rs[i:min(i+3, len(rs))]), "<<<"):
				i += 2
				redir = redirHere
			case i+1 < len(rs) && rs[i+1] == '<':
				fit(func(rs []rune) int { _, _, _, j := heredocDelim(rs, i); return j })
				i = cutHeredoc(rs, i, &st, &noNL, &cut)
			case i+1 < len(rs) && (rs[i+1] == '&' || rs[i+1] == '>'): // <&3, <> file
				i++
				for i+1 < len(rs) && (rs[i+1] == '-' || (rs[i+1] >= '0' && rs[i+1] <= '9')) {
					i++
				}
			default:
				redir = redirIn
			}
		case c == '(':
			// A subshell: its cd ends with it.
			endPipeline(';')
			sub = append(sub, dirSaved{cwd, dirs})
		case c == ')':
			endPipeline(';')
			if n := len(sub); n > 0 {
				cwd, dirs = sub[n-1].cwd, sub[n-1].dirs
				sub = sub[:n-1]
			}
		case (c == '{' || c == '}') && !inw && (c == '}' || i+1 == len(rs) || strings.ContainsRune(" \t\n", rs[i+1])):
			// A group's braces are words of their own; {} and -I{} are
			// arguments (find -exec rm {} ;).
			endPipeline(';')
		default:
			word.WriteRune(c)
			inw = true
		}
	}
	endPipeline(';')
	// The aliases the line defines: bash expands one (with shopt -s
	// expand_aliases, from the next line on) where a command begins.
	aliases, aliasBudget := map[string]string{}, len(cmd)
	links := map[string]string{} // a path ln or cp made → what it links to or copies
	for _, pl := range p.pipelines {
		for i := range pl {
			var inner []string
			st := &pl[i]
			cwd = st.dir // inner lines run where their stage does
			if len(st.words) > 0 {
				if v, ok := aliases[st.words[0]]; ok {
					// Each use is the alias's text again: past a budget of
					// the line's own length, a use is opaque, so a long
					// alias used often is not read over and over.
					if aliasBudget -= len(v); aliasBudget < 0 {
						st.opaque = true
					} else {
						addInner(commandLine(append([]string{v}, st.words[1:]...)))
					}
				}
				if st.words[0] == "alias" {
					for _, a := range st.words[1:] {
						if name, v, ok := strings.Cut(a, "="); ok {
							aliases[name] = v
						}
					}
				}
			}
			var fromInput bool
			st.words, inner, st.priv, fromInput = unwrap(st.words)
			st.opaque = st.opaque || fromInput
			if len(st.words) > 0 {
				// A program the line linked or copied (ln -s /usr/bin/git
				// g && ./g push) is what it links to.
				if src, ok := links[linkKey(st.dir, st.words[0])]; ok && strings.Contains(st.words[0], "/") {
					if aliasBudget -= len(src); aliasBudget < 0 || expands(src) {
						st.opaque = true
					} else {
						addInner(commandLine(append([]string{src}, st.words[1:]...)))
					}
				}
				if src, dst, ok := linked(st.words); ok {
					links[linkKey(st.dir, dst)] = src
				}
			}
			p.inner = append(p.inner, lines(inner, cwd)...)
			if len(st.words) > 0 && expands(st.words[0]) {
				st.opaque = true // no rule can name a program the shell makes up
			}
			if len(st.words) > 0 && base(st.words[0]) == "git" && !gitKnown(st.words) {
				st.opaque = true // an alias from a config file, or a word expanded
			}
			if !readsScript(st.words) {
				// A heredoc fed to another program is its data, but the
				// shell runs the $(…) and `…` of one it expands.
				for _, h := range st.here {
					if h.expand {
						addInner(substitutions(h.text)...)
					}
				}
				continue
			}
			// A shell that runs no -c line reads its commands from a
			// script or its input: a heredoc's or here-string's literal
			// text is read. A script file (sh x.sh, source f, sh < f, cat
			// f | sh) is run as ./x.sh is, local: what it holds is no more
			// hidden than a script run by its path, so asking for it would
			// only stall ordinary work (a virtualenv's activate). Another
			// program's output (base64 -d x | sh, sh <(…)) is text made to
			// be unreadable, and the stage is opaque. echo's or printf's
			// words or cat's heredoc piped in are read too, so what a rule
			// names in them still matches; echo's and printf's stay opaque,
			// as a shell's echo or a format may decode escapes.
			for _, h := range st.here {
				addInner(h.text)
			}
			if substituted(st.words) || (len(st.here) == 0 && i > 0 && !scriptOperand(st.words) && base(firstWord(pl[i-1])) != "cat") {
				st.opaque = true
			}
			if i > 0 && len(pl[i-1].words) > 0 {
				switch prev := pl[i-1].words; base(prev[0]) {
				case "echo", "printf":
					args := prev[1:]
					for len(args) > 0 && strings.HasPrefix(args[0], "-") {
						args = args[1:]
					}
					addInner(strings.ReplaceAll(strings.Join(args, " "), `\n`, "\n"))
				case "cat":
					for _, h := range pl[i-1].here { // cat <<EOF | sh
						addInner(h.text)
					}
				}
			}
		}
	}
	return p
}

// expands tells whether the shell would expand a word into another (a
// parameter, a command substitution, braces, a glob), so the word a rule
// would match is not the program that runs. [ and [[ are programs.
func expands(w string) bool {
	if strings.ContainsAny(w, "$`{}*?") {
		return true
	}
	open := strings.IndexByte(w, '[')
	return open >= 0 && strings.IndexByte(w[open:], ']') > 0
}

// ansiC is the text of $'…' quoting, its escapes decoded as bash decodes
// them.
func ansiC(rs []rune) string {
	var b strings.Builder
	num := func(i, max, radix int) (int, int) {
		n, k := 0, 0
		for ; k < max && i+k < len(rs); k++ {
			d := strings.IndexRune("0123456789abcdef", unicode.ToLower(rs[i+k]))
			if d < 0 || d >= radix {
				break
			}
			n = n*radix + d
		}
		return n, k
	}
	for i := 0; i < len(rs); i++ {
		if rs[i] != '\\' || i+1 == len(rs) {
			b.WriteRune(rs[i])
			continue
		}
		i++
		switch c := rs[i]; c {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case 'c':
			if i+1 < len(rs) {
				i++
				b.WriteRune(rs[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			width := map[rune]int{'x': 2, 'u': 4, 'U': 8}[c]
			n, k := num(i+1, width, 16)
			if k == 0 {
				b.WriteRune('\\')
				b.WriteRune(c)
				continue
			}
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i += k
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, k := num(i, 3, 8)
			b.WriteByte(byte(n))
			i += k - 1
		case '\\', '\'', '"', '?':
			b.WriteRune(c)
		default: // bash keeps an escape it does not know
			b.WriteRune('\\')
			b.WriteRune(c)
		}
	}
	return b.String()
}

// cutBodies are the bodies of the heredocs read on the current line,
// left in place: the line, to its newline nl, reads on after them at end.
// A shell reads a line's heredocs' bodies one after another past it; the
// line used to be moved up to each body's end as its heredoc was read,
// quadratic in a line of many (cat <<E <<E <<E …). Now the reading jumps
// at the newline, and the line is moved (settle) only when a scan (an
// unclosed quote, a $( closed past the newline) would run on into them.
type cutBodies struct{ nl, end int }

// settle moves the rest of the line, from i to its newline, up to the
// bodies' end, and returns where it now begins.
func (c *cutBodies) settle(rs []rune, i int) int {
	rest := rs[i : c.nl+1]
	at := c.end - len(rest)
	copy(rs[at:c.end], rest)
	c.nl = -1
	return at
}

// heredocDelim reads the delimiter of the heredoc whose << is at i:
// whether <<- strips the body's leading tabs, the delimiter, whether it
// was quoted (the body is then not expanded), and the index after it.
func heredocDelim(rs []rune, i int) (strip bool, delim string, quoted bool, j int) {
	j = i + 2
	strip = j < len(rs) && rs[j] == '-' // <<- drops the lines' leading tabs
	if strip {
		j++
	}
	for j < len(rs) && (rs[j] == ' ' || rs[j] == '\t') {
		j++
	}
	var b strings.Builder
	for ; j < len(rs) && !strings.ContainsRune(" \t\n;&|<>()", rs[j]); j++ {
		switch rs[j] {
		case '\'', '"':
			q := rs[j]
			quoted = true
			for j++; j < len(rs) && rs[j] != q; j++ {
				b.WriteRune(rs[j])
			}
		case '\\':
			quoted = true
			if j+1 < len(rs) {
				j++
				b.WriteRune(rs[j])
			}
		default:
			b.WriteRune(rs[j])
		}
	}
	return strip, b.String(), quoted, j
}

// cutHeredoc reads the heredoc whose << is at i: its delimiter and its
// body, the lines after the current one (after the bodies cut already
// read) up to the delimiter's. The body goes to st.here and is left in
// cut; it returns the index to go on after, the delimiter word's last.
// noNL is where the line holds no newline to its end, as found before.
func cutHeredoc(rs []rune, i int, st *stage, noNL *int, cut *cutBodies) int {
	strip, delim, quoted, j := heredocDelim(rs, i)
	end := j - 1
	nl := j
	if cut.nl >= 0 {
		nl = cut.nl // fit kept j before it, and the line holds no other
	} else {
		for nl < len(rs) && nl < *noNL && rs[nl] != '\n' {
			nl++
		}
		if nl >= *noNL {
			nl = len(rs)
		}
		if nl >= len(rs) {
			*noNL = min(*noNL, j) // no newline from here on: not sought again
		}
	}
	if delim == "" || nl >= len(rs) {
		return end
	}
	var body []string
	k, stop := nl+1, len(rs)
	if cut.nl >= 0 {
		k = cut.end
	}
	for k < len(rs) {
		e := k
		for e < len(rs) && rs[e] != '\n' {
			e++
		}
		line := string(rs[k:e])
		if strip {
			line = strings.TrimLeft(line, "\t")
		}
		k = min(e+1, len(rs))
		if line == delim {
			stop = k
			break
		}
		body = append(body, line)
	}
	st.here = append(st.here, heredoc{text: strings.Join(body, "\n"), expand: !quoted})
	cut.nl, cut.end = nl, stop
	return end
}

// quoteEnd is the index of the first q from j, or len(rs).
func quoteEnd(rs []rune, j int, q rune) int {
	for j < len(rs) && rs[j] != q {
		j++
	}
	return j
}

// ansiEnd is where the $'…' whose text begins at j ends, as parseShell
// reads it.
func ansiEnd(rs []rune, j int) int {
	for j < len(rs) && rs[j] != '\'' {
		if rs[j] == '\\' {
			j++
		}
		j++
	}
	return j
}

// dquoteEnd is where the "…" whose text begins at j ends, as parseShell
// reads it: its $(…) and `…` may hold a quote.
func dquoteEnd(rs []rune, j int) int {
	for j < len(rs) && rs[j] != '"' {
		if rs[j] == '\\' {
			j++
		} else if rs[j] == '$' && j+1 < len(rs) && rs[j+1] == '(' {
			j = closing(rs, j+1)
		} else if rs[j] == '`' {
			j = backtickEnd(rs, j+1)
		}
		j++
	}
	return j
}

// backtickEnd is where the `…` whose text begins at j ends: at the first
// backtick not escaped by a backslash, whatever quotes come before it (bash
// reads "`echo "x"; git push`" as one word, and an escaped backtick inside
// one as a substitution in its line), or len(rs).
func backtickEnd(rs []rune, j int) int {
	for j < len(rs) && rs[j] != '`' {
		if rs[j] == '\\' {
			j++
		}
		j++
	}
	return min(j, len(rs))
}

// backtickLine is the command line a `…` runs, its text as the shell
// hands it on: a backslash before $, ` or \ (and " in "…", inDquote) is
// dropped, so an escaped backtick is a substitution of the inner line and
// one escaped twice a literal backtick in it.
func backtickLine(text []rune, inDquote bool) string {
	var b strings.Builder
	for k := 0; k < len(text); k++ {
		if text[k] == '\\' && k+1 < len(text) && (strings.ContainsRune("$`\\", text[k+1]) || inDquote && text[k+1] == '"') {
			k++
		}
		b.WriteRune(text[k])
	}
	return b.String()
}

// substitutions are the command lines of the $(…) and `…` in a text the
// shell expands.
func substitutions(text string) []string {
	rs := []rune(text)
	var out []string
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '\\':
			i++
		case rs[i] == '$' && i+1 < len(rs) && rs[i+1] == '(':
			end := closing(rs, i+1)
			out = append(out, string(rs[i+2:end]))
			i = end
		case rs[i] == '`':
			j := backtickEnd(rs, i+1)
			out = append(out, backtickLine(rs[i+1:j], false))
			i = j
		}
	}
	return out
}

// readsScript tells whether a stage is a shell that runs no -c line, so
// reads its commands from a script file or its input, or source or . (a
// script file).
func readsScript(words []string) bool {
	if len(words) == 0 {
		return false
	}
	prog := base(words[0])
	if prog == "source" || prog == "." || inputShells[prog] {
		return true
	}
	if prog == "su" {
		return !slices.Contains(words, "-c") && !slices.Contains(words, "--command") // unwrap read its line
	}
	if !shells[prog] {
		return false
	}
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "c") {
			return false // unwrap read its line
		}
	}
	return true
}

// shellValued are a shell's options that take the next word as a value.
var shellValued = map[string]bool{"-o": true, "+o": true, "-O": true, "+O": true, "--rcfile": true, "--init-file": true}

// scriptOperand tells whether a shell (or source) is given a script to run
// rather than reading its input: its first word that is not an option.
func scriptOperand(words []string) bool {
	switch p := base(words[0]); {
	case p == "source" || p == ".":
		return true
	case p == "su": // its operand is a user
		return false
	case inputShells[p]: // at -f script
		return slices.Contains(words, "-f")
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return i+1 < len(words)
		case shellValued[w]:
			i++
		case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+"):
		default:
			return true
		}
	}
	return false
}

// substituted tells whether a shell's (or source's) script is another
// program's output, a process substitution: sh <(…), source <(…).
func substituted(words []string) bool {
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "<(") {
			return true
		}
	}
	return false
}

// firstWord is a stage's program word, "" for none.
func firstWord(st stage) string {
	if len(st.words) == 0 {
		return ""
	}
	return st.words[0]
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

// readSetting reads an assignment word NAME=VALUE given to a command or
// exported: a variable whose value git or another program runs as a line
// (commandValued, GIT_CONFIG_VALUE_n) adds that line to inner;
// GIT_CONFIG_PARAMETERS, git's settings in its own quoting, is not read
// here and makes the stage opaque.
func readSetting(word string, inner []string, opaque bool) ([]string, bool) {
	name, value, ok := strings.Cut(word, "=")
	switch {
	case !ok:
	case (commandValued[name] || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")) && !sshTransport(strings.ToLower(name), value):
		inner = append(inner, strings.TrimPrefix(value, "!"))
	case name == "GIT_CONFIG_PARAMETERS":
		opaque = true
	}
	return inner, opaque
}

// exporters are the builtins that set a variable for the commands after
// them on the line.
var exporters = map[string]bool{"export": true, "declare": true, "typeset": true, "readonly": true, "local": true}

// linkKey is the path p names run from dir, as the kernel resolves it
// (./././g, b//g and b/../b/g are one file): how a link the line made is
// found again however the line spells it.
func linkKey(dir, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(dir, p)
}

// inputShells run the commands their input holds, later (at, batch).
var inputShells = map[string]bool{"at": true, "batch": true}

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
func unwrap(in []string) (words []string, inner []string, priv string, fromInput bool) {
	words = in
	var xargs []string // the words after an xargs, whose input adds to them
	fed := false       // a runner's input adds to what runs (parallel)
	defer func() {
		fromInput = fromInput || fed
		// xargs's input names what its words leave out: the program
		// (xargs env), or git's subcommand (xargs git).
		if len(xargs) > 0 && (len(words) == 0 || base(words[0]) == "git" && len(gitArgs(words[1:])) == 0) {
			if len(words) == 0 {
				words = xargs
			}
			fromInput = true
		}
	}()
	for len(words) > 0 {
		w := base(words[0])
		valued, wrapper := wrappers[w]
		if raisers[w] {
			priv = w
		}
		if keywords[words[0]] {
			words = words[1:] // if git push; then …: the command after
			continue
		}
		if run, ok := runners[w]; ok {
			rest, line, input := run(words[1:])
			fed = fed || input
			if line != "" {
				inner = append(inner, line)
			}
			if line != "" || rest == nil {
				return words, inner, priv, false
			}
			words = rest
			continue
		}
		switch {
		case strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "="):
			inner, fed = readSetting(words[0], inner, fed)
			words = words[1:]
		case exporters[w]:
			// export GIT_EXTERNAL_DIFF='…'; git diff: what the line sets
			// for the commands after it
			for _, a := range words[1:] {
				inner, fed = readSetting(a, inner, fed)
			}
			return words, inner, priv, false
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
					return words, append(inner, commandLine(append([]string{line}, rest...))), priv, false
				}
				if valued[opt] && len(words) > 1 {
					words = words[1:]
				} else if !strings.HasPrefix(opt, "-") {
					inner, fed = readSetting(opt, inner, fed) // env GIT_PAGER='…' git log
				}
				words = words[1:]
			}
			if w == "timeout" && len(words) > 0 {
				words = words[1:] // the duration
			}
			if w == "xargs" {
				xargs = words
			}
		case w == "eval":
			return words, append(inner, strings.Join(words[1:], " ")), priv, false
		case w == "find":
			return words, append(inner, findExec(words[1:])...), priv, false
		case w == "git":
			settings, fromEnv := gitSettingLines(words[1:])
			inner = append(inner, settings...)
			words, lines := gitAlias(words)
			lines = append(lines, gitRunLines(gitArgs(words[1:]))...)
			return words, append(inner, lines...), priv, fromEnv
		case w == "su":
			for i := 1; i+1 < len(words); i++ {
				if words[i] == "-c" || words[i] == "--command" {
					return words, append(inner, words[i+1]), priv, false
				}
			}
			return words, inner, priv, false
		case shells[w]:
			if line, ok := shellLine(words[1:]); ok {
				return words, append(inner, line), priv, false
			}
			return words, inner, priv, false
		default:
			return words, inner, priv, false
		}
	}
	if priv != "" && priv != "su" {
		// sudo -s, sudo -i, doas -s: a raised shell with no command,
		// reading its input as sh does
		words = []string{"sh"}
	}
	return words, inner, priv, false
}

// gitAlias is a git command with the aliases its own -c alias.<name>=<value>
// options define expanded (git -c alias.p=push p is git -c … push), and the
// shell line of one whose value begins with ! to be read as commands.
func gitAlias(words []string) (_ []string, inner []string) {
	for range 8 { // git itself refuses an alias loop
		aliases := map[string]string{}
		i := 1
		for ; i < len(words) && strings.HasPrefix(words[i], "-"); i++ {
			if words[i] == "-c" && i+1 < len(words) {
				if k, v, ok := strings.Cut(words[i+1], "="); ok && len(k) > 6 && strings.EqualFold(k[:6], "alias.") {
					aliases[strings.ToLower(k[6:])] = v
				}
			}
			if gitValued[words[i]] && i+1 < len(words) {
				i++
			}
		}
		if i >= len(words) || gitCommands[words[i]] { // an alias cannot hide git's own command
			return words, nil
		}
		v, ok := aliases[strings.ToLower(words[i])]
		if !ok {
			return words, nil
		}
		if line, shell := strings.CutPrefix(v, "!"); shell {
			return words, []string{strings.Join(append([]string{line}, words[i+1:]...), " ")}
		}
		words = slices.Concat(words[:i], strings.Fields(v), words[i+1:])
	}
	return words, nil
}

// gitKnown tells whether what a git command runs can be read from it: no
// subcommand, one of git's own, or a shell alias its -c defines (read by
// gitAlias). Anything else is an alias from a config file, a git-<name>
// program, or a word the shell expands.
func gitKnown(words []string) bool {
	args := gitArgs(words[1:])
	if len(args) == 0 || gitCommands[args[0]] {
		return true
	}
	for i := 1; i+1 < len(words); i++ {
		if words[i] == "-c" && strings.HasPrefix(strings.ToLower(words[i+1]), "alias."+strings.ToLower(args[0])+"=!") {
			return true
		}
	}
	return false
}

// gitCommands are git's own commands (git --list-cmds=main, and the
// porcelain installed apart: send-email, svn, p4, gui, …).
var gitCommands = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`add am annotate apply archimport archive backfill bisect blame branch bugreport bundle
		cat-file check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool
		clean clone column commit commit-graph commit-tree config count-objects credential credential-cache
		credential-store cvsexportcommit cvsimport cvsserver daemon describe diagnose diff diff-files diff-index
		diff-pairs diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg
		for-each-ref for-each-repo format-patch fsck fsck-objects fsmonitor--daemon gc get-tar-commit-id grep gui
		hash-object help hook http-backend http-fetch http-push imap-send index-pack init init-db instaweb
		interpret-trailers last-modified log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge
		merge-base merge-file merge-index merge-one-file merge-tree mergetool mktag mktree multi-pack-index mv
		name-rev notes p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport
		range-diff read-tree rebase receive-pack reflog refs remote repack replace replay repo request-pull rerere
		reset restore rev-list rev-parse revert rm send-email send-pack shell shortlog show show-branch show-index
		show-ref sparse-checkout stage stash status stripspace submodule subtree svn switch symbolic-ref tag
		unpack-file unpack-objects update-index update-ref update-server-info upload-archive upload-pack var
		verify-commit verify-pack verify-tag version whatchanged worktree write-tree`) {
		m[c] = true
	}
	return m
}()

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
func walk(cmd string, depth int, fn func(pipeline)) { walkIn(cmd, "", depth, fn) }

func walkIn(cmd, dir string, depth int, fn func(pipeline)) {
	walkOnce(innerLine{cmd, dir}, depth, map[innerLine]int{}, fn)
}

// walkOnce walks a line unless it was walked whole before at a depth no
// deeper, which found every pipeline this walk would: each of walk's
// callers wants a pipeline once (a set of actions, the first floor case,
// whether any stage fetches). A line is read again at every level of
// eval "$(eval "$(…, as the substitution and as eval's words: walked each
// time, a line of nine levels was read 2⁸ times.
func walkOnce(in innerLine, depth int, done map[innerLine]int, fn func(pipeline)) {
	if depth > 8 {
		return
	}
	if d, ok := done[in]; ok && d <= depth {
		return
	}
	p := parseShell(in.text, in.dir)
	for _, pl := range p.pipelines {
		fn(pl)
	}
	for _, inner := range p.inner {
		walkOnce(inner, depth+1, done, fn)
	}
	// Marked once whole: a line inside itself is walked again, as before.
	if d, ok := done[in]; !ok || depth < d {
		done[in] = depth
	}
}
