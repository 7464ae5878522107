package permissions

import "strings"

// commandLine is words the shell already split, made a line again to be
// read as one: the first as written (an alias's text, a shell line git
// runs, a program), each other quoted where it holds a blank, a quote or
// an operator, so that it stays one word (alias s=sh; s -c 'git push' is
// sh -c 'git push', where joined with spaces it read as sh -c git). An
// expansion ($X, *) is left as written: the reader marks it the same
// quoted or not.
func commandLine(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
			if w == "" || strings.ContainsAny(w, " \t\n'\"\\;&|<>()`#") {
				w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
			}
		}
		b.WriteString(w)
	}
	return b.String()
}
