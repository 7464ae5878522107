package sim

import (
	"strings"
	"testing"
)

// TestNormTextMatchesTheSlowForm pins the one-pass normalisation to the
// definition it replaces, on ASCII and non-ASCII text alike.
func TestNormTextMatchesTheSlowForm(t *testing.T) {
	for _, s := range []string{
		"", " ", "\t\n", "Answer: 42", "  Leading and   trailing  ", "MiXeD\r\nCase\v\fText",
		"x", " x", "x ", "a\u00a0b", "Ünïcödé  ÄND\tSpaces", "İstanbul", "ẞ tall",
		"The answer is 391.\nAnswer: 391", strings.Repeat("Word ", 50),
	} {
		want := strings.ToLower(strings.Join(strings.Fields(s), " "))
		if got := normText(s); got != want {
			t.Errorf("normText(%q) = %q, want %q", s, got, want)
		}
	}
}
