package permissions

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Shown is text a model wrote (a command, a path) as a person is shown it
// to approve: every character a screen would act on rather than show —
// control characters (a terminal's escape sequences, a carriage return, a
// newline that starts a second command), format characters (a right-to-left
// override that reorders what follows, a zero-width space) and bytes that
// are not UTF-8 — is written as its Go escape (\x1b, \u202e, \n), so what is
// shown is what runs. Printable text, any script's, is kept; so is a
// backslash, which makes Shown idempotent.
func Shown(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && hidden(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// Shown is the action as a person is shown it: kind(target), its target
// Shown.
func (a Action) Shown() string { return string(a.Kind) + "(" + Shown(a.Target) + ")" }

// hidden tells a character a screen acts on or does not show: all but
// graphic characters and the space. U+FFFD itself is shown escaped, so it
// is not mistaken for a byte that is not UTF-8.
func hidden(r rune) bool { return r == utf8.RuneError || (!unicode.IsGraphic(r) && r != ' ') }
