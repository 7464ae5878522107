package permissions

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Shown writes what a screen would act on as its escape and keeps what it
// shows.
func TestShownEscapesWhatAScreenActsOn(t *testing.T) {
	for in, want := range map[string]string{
		"go test ./...":                 "go test ./...",
		"echo 'héllo 世界' | wc -c":       "echo 'héllo 世界' | wc -c",
		"ls\nrm -rf src":                `ls\nrm -rf src`,
		"ok\x1b[2K\rgone":               `ok\x1b[2K\rgone`,
		"a\u202eb\u2066c\u200bd":        `a\u202eb\u2066c\u200bd`,
		"bad \xff byte":                 `bad \xff byte`,
		`grep 'a\|b' x`:                 `grep 'a\|b' x`,
		"tab\there\x00nul\x7fdel\u0085": `tab\there\x00nul\x7fdel\u0085`,
	} {
		if got := Shown(in); got != want {
			t.Errorf("Shown(%q) = %q; want %q", in, got, want)
		}
	}
}

// Two commands are never shown alike: a real newline and a written
// backslash-n differ, so echo hi<newline>rm -rf x cannot pass for one
// harmless line.
func TestShownTellsAnEscapeFromTheTextItStandsFor(t *testing.T) {
	for _, pair := range [][2]string{
		{"echo hi\nrm -rf x", `echo hi\nrm -rf x`},
		{"a\tb", `a\tb`},
		{"a\x1bb", `a\x1bb`},
		{"a\u202eb", `a\u202eb`},
		{"a\xffb", `a\xffb`},
		{"a\\\nb", `a\\nb`},
		{"printf 'a\\n'\x1b", `printf 'a\n'\x1b`},
	} {
		if a, b := Shown(pair[0]), Shown(pair[1]); a == b {
			t.Errorf("Shown(%q) and Shown(%q) are both %q", pair[0], pair[1], a)
		}
	}
	for _, s := range []string{"echo hi\nrm -rf x", `echo hi\nrm -rf x`, `a\\nb`, "a\\\x1b", `x\`, `\\\`, "\\\xff", `grep 'a\|b' \\.`} {
		if got, ok := unshown(Shown(s)); !ok || got != s {
			t.Errorf("Shown(%q) = %q reads back as %q (%v)", s, Shown(s), got, ok)
		}
	}
}

// unshown reads Shown text back: the escapes Shown writes, \\ a
// backslash, any other backslash itself. ok is false where Shown could not
// have written the text.
func unshown(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		width := map[byte]int{'\\': 0, 'n': 0, 't': 0, 'r': 0, 'x': 2, 'u': 4, 'U': 8}
		w, ok := width[s[i+1]]
		if !ok {
			b.WriteByte('\\')
			i++
			continue
		}
		switch c := s[i+1]; {
		case c == '\\':
			b.WriteByte('\\')
		case c == 'n':
			b.WriteByte('\n')
		case c == 't':
			b.WriteByte('\t')
		case c == 'r':
			b.WriteByte('\r')
		default:
			if i+2+w > len(s) {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+2:i+2+w], 16, 32)
			if err != nil {
				return "", false
			}
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
		}
		i += 2 + w
	}
	return b.String(), utf8.ValidString(s)
}
