package providers

import (
	"regexp"
	"strings"
)

// A keyShape is one shape MaskKeys hides. Running each regexp over the
// whole text cost 0.5–2 MB/s (a CLI agent streaming megabytes spent seconds
// of CPU here), so replace finds where a match may start by the shape's
// literal (next, a byte search) and runs the regexp, anchored, only there.
// It replaces exactly what re.ReplaceAllString(text, repl) would: the
// leftmost start a match may have is the leftmost next gives whose
// anchored match succeeds, and a leading \b (the only kind the shapes
// have) is checked by hand, since an anchored regexp cannot see the byte
// before its start.
type keyShape struct {
	re   *regexp.Regexp // the shape as written (the tests hold replace to it)
	at   *regexp.Regexp // the shape anchored, its leading \b left out
	repl string
	word bool // the shape begins with \b
	// next returns the first position ≥ from a match may start at, and
	// where to look again if none starts there; start < 0 when none is left.
	next func(text string, from int) (start, again int)
}

func shape(expr, repl string, next func(string, int) (int, int)) keyShape {
	word := strings.Contains(expr, `\b`)
	anchored := "^(?:" + strings.Replace(expr, `\b`, "", 1) + ")"
	return keyShape{
		re: regexp.MustCompile(expr), at: regexp.MustCompile(anchored),
		repl: repl, word: word, next: next,
	}
}

func (k *keyShape) replace(text string) string {
	var out []byte
	kept := 0 // text[:kept] is in out, masked
	for from := 0; from < len(text); {
		p, again := k.next(text, from)
		if p < 0 {
			break
		}
		if k.word && p > 0 && isWordByte(text[p-1]) {
			from = again
			continue
		}
		m := k.at.FindStringSubmatchIndex(text[p:])
		if m == nil {
			from = again
			continue
		}
		out = append(out, text[kept:p]...)
		out = k.at.ExpandString(out, k.repl, text[p:], m)
		kept = p + m[1]
		from = kept
	}
	if out == nil {
		return text
	}
	return string(append(out, text[kept:]...))
}

// isWordByte is \b's idea of a word character: ASCII letters, digits and _
// (a byte of a multi-byte character is none).
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// literal finds the shapes that begin with lit.
func literal(lit string) func(string, int) (int, int) {
	return func(text string, from int) (int, int) {
		i := strings.Index(text[from:], lit)
		if i < 0 {
			return -1, 0
		}
		return from + i, from + i + 1
	}
}

// anyOf finds the shapes that begin with one of chars.
func anyOf(chars string) func(string, int) (int, int) {
	return func(text string, from int) (int, int) {
		i := strings.IndexAny(text[from:], chars)
		if i < 0 {
			return -1, 0
		}
		return from + i, from + i + 1
	}
}

// folded finds the (?i) shapes that begin with one of prefixes, ASCII
// letters in any case. It must not miss a match, so the prefixes hold none
// of the letters (?i) also matches outside ASCII: k (the Kelvin sign) and s
// (the long s).
func folded(prefixes ...string) func(string, int) (int, int) {
	for _, p := range prefixes {
		if strings.ContainsAny(p, "ksKS") {
			panic("providers: folded prefix " + p + " has a letter (?i) matches outside ASCII")
		}
	}
	var first [256]bool
	for _, p := range prefixes {
		first[lower(p[0])], first[lower(p[0])-'a'+'A'] = true, true
	}
	return func(text string, from int) (int, int) {
		for i := from; i < len(text); i++ {
			if !first[text[i]] {
				continue
			}
			for _, p := range prefixes {
				if hasFoldPrefix(text[i:], p) {
					return i, i + 1
				}
			}
		}
		return -1, 0
	}
}

// hasFoldPrefix says whether s begins with prefix (lower case ASCII), its
// letters in any case.
func hasFoldPrefix(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for j := 0; j < len(prefix); j++ {
		if c := prefix[j]; s[j] != c && ('a' > c || c > 'z' || s[j] != c-'a'+'A') {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c - 'A' + 'a'
	}
	return c
}

// scheme finds a URL's start: the first letter at a word boundary in the
// run of scheme characters before a "://". Whether the rest matches does
// not depend on where in that run the scheme begins, so when it does not,
// the search goes on past this "://" (and a run of a.b.c… costs no more
// than its length).
func scheme(text string, from int) (int, int) {
	for {
		i := strings.Index(text[from:], "://")
		if i < 0 {
			return -1, 0
		}
		sep := from + i
		run := sep
		for run > from && schemeByte(text[run-1]) {
			run--
		}
		for q := run; q < sep; q++ {
			if c := text[q] | 0x20; 'a' <= c && c <= 'z' && (q == 0 || !isWordByte(text[q-1])) {
				return q, sep + 1
			}
		}
		from = sep + 1
	}
}

func schemeByte(c byte) bool {
	return c == '+' || c == '.' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
