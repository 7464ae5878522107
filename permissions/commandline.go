package permissions

import "strings"

// commandLine is words the shell already split, made a line again to be
// read as one: the first as written (an alias's text, a shell line git
// runs, a program), each other a quotedWord, so that it stays one word
// (alias s=sh; s -c 'git push' is sh -c 'git push', where joined with
// spaces it read as sh -c git).
func commandLine(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
			w = quotedWord(w)
		}
		b.WriteString(w)
	}
	return b.String()
}

// quotedWord is w single-quoted where it holds a blank, a quote or an
// operator. An expansion ($X, *) is left as written: the reader marks it
// the same quoted or not.
func quotedWord(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\n'\"\\;&|<>()`#") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
