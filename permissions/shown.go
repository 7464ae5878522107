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
// are not UTF-8 — is written as its Go escape (\x1b, \u202e, \n), and a
// backslash that would read as the start of one (before n, t, r, x, u, U,
// a backslash or an escaped character) as \\, so what is shown is what
// runs and no two texts are shown alike: a real newline shows as \n, a
// written one as \\n. Printable text, any script's, is kept, and so is
// every other backslash (grep 'a\|b', find's \;).
//
// Shown is applied once, where text is first made into what a person sees
// (an ask's texts where the ask is made, a log record's where it is shown):
// being one-to-one it cannot also be idempotent, and Shown(Shown(x)) shows
// x's backslashes doubled. Text already Shown is shown again by Screened.
func Shown(s string) string {
	if !strings.ContainsFunc(s, hidden) && !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == '\\' && readsAsEscape(s[n:]):
			b.WriteString(`\\`)
		default:
			escape(&b, r, s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// Screened is text already Shown (an ask as the store keeps it) as a
// surface shows it again: a character a screen acts on that reached it
// anyway is escaped, and backslashes are left as they are, so Shown text
// is unchanged (Screened(Shown(x)) == Shown(x)) and Screened is idempotent.
func Screened(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		escape(&b, r, s[:n])
		s = s[n:]
	}
	return b.String()
}

// readsAsEscape tells whether a backslash before rest would read as the
// start of an escape Shown writes.
func readsAsEscape(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return rest != "" && (strings.ContainsRune(`\ntrxuU`, r) || hidden(r))
}

// escape writes r (its bytes text) as Shown shows it.
func escape(b *strings.Builder, r rune, text string) {
	switch {
	case r == utf8.RuneError && len(text) == 1:
		fmt.Fprintf(b, `\x%02x`, text[0])
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\r':
		b.WriteString(`\r`)
	case r < 0x80 && hidden(r):
		fmt.Fprintf(b, `\x%02x`, r)
	case hidden(r) && r > 0xffff:
		fmt.Fprintf(b, `\U%08x`, r)
	case hidden(r):
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		b.WriteString(text)
	}
}

// Shown is the action as a person is shown it: kind(target), its target
// Shown.
func (a Action) Shown() string { return string(a.Kind) + "(" + Shown(a.Target) + ")" }

// Screened is an action already Shown (an ask's, as stored) as a surface
// shows it again: kind(target), its target Screened.
func (a Action) Screened() string { return string(a.Kind) + "(" + Screened(a.Target) + ")" }

// hidden tells a character a screen acts on or does not show: all but
// graphic characters and the space. U+FFFD itself is shown escaped, so it
// is not mistaken for a byte that is not UTF-8.
func hidden(r rune) bool { return r == utf8.RuneError || (!unicode.IsGraphic(r) && r != ' ') }
