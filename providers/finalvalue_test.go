package providers

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
)

func TestFinalValue(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// Markers.
		{"gsm8k marker", "She has 3 + 4 = 7 boxes, 7 * 10 = 70 pens, plus 2.\n#### 72", "72"},
		{"gsm8k marker without space", "####72", "72"},
		{"answer marker", "17 * 23 = 391.\nAnswer: 391", "391"},
		{"short marker", "Q: what is 3*4?\nA: 12", "12"},
		{"marker case-insensitive", "ANSWER: Paris", "paris"},
		{"final answer phrase", "Let me think.\nFinal answer: 42", "42"},
		{"last marker wins", "Answer: 41\nWait, I slipped.\nAnswer: 42", "42"},
		{"marker takes only its line", "Answer: 42\nBecause 6 * 7 = 43 is wrong.", "42"},
		{"marker value on the next line", "Answer:\n\n  42  \n", "42"},
		{"bold marker", "**Answer:** 391", "391"},
		{"bold word then colon", "**Answer**: 391", "391"},
		{"marker with markdown heading", "## Answer: Rome", "rome"},
		{"marker inside a word is no marker", "metadata: 5 items, total 12", "12"},
		{"marker must follow whitespace", "QA:7 and then 9", "9"},
		{"empty marker is ignored", "The total is 15.\nAnswer:", "15"},
		{"marker with space before colon", "Answer : 8", "8"},
		{"marker text kept as text", "Answer: Washington, D.C.", "washington, d.c"},
		{"marker text with number inside", "Answer: 1,200 apples.", "1200 apples"},
		{"marker multiple choice letter", "Answer: (B)", "b"},

		// Last number.
		{"bold number sentence", "The answer is **391**.", "391"},
		{"last of several numbers", "First 3, then 5, finally 8 remain", "8"},
		{"thousands separators", "The total comes to 1,234,567 dollars", "1234567"},
		{"thousands with decimals", "It costs $1,234.50 in all.", "1234.5"},
		{"trailing zero decimal", "The product is 391.0", "391"},
		{"leading zeros", "code 007", "7"},
		{"negative number", "The temperature fell to -5.", "-5"},
		{"typographic minus", "The result is \u221212", "-12"},
		{"explicit plus", "a gain of +7", "7"},
		{"negative zero", "it is -0", "0"},
		{"negative zero decimal", "it is -0.00", "0"},
		{"leading dot decimal", "about .50 of it", "0.5"},
		{"minus between numbers is an operator", "pages 3-4", "4"},
		{"number in a label is not a number", "I vote for agent2", "i vote for agent2"},
		{"version-like number is skipped", "use v1.0 please", "use v1.0 please"},
		{"decimal kept", "pi is about 3.14159", "3.14159"},
		{"comma list is not thousands", "values 1,2,3", "3"},
		{"bad grouping", "1,2345 items", "1,2345 items"},
		{"number before unit", "It weighs 5kg", "5"},
		{"percent", "Growth was 50%", "50"},

		// Whole text.
		{"city with period", "Paris.", "paris"},
		{"quoted text", "\"Canberra\"", "canberra"},
		{"curly quotes", "\u201cOttawa\u201d!", "ottawa"},
		{"dollar math", "$x$", "x"},
		{"code ticks", "`true`", "true"},
		{"whitespace collapsed", "  New \t York\n City  ", "new york city"},
		{"emphasis and punctuation layered", "**Rome**.", "rome"},
		{"underscores", "_Berlin_", "berlin"},
		{"trailing punctuation run", "Yes!!;", "yes"},
		{"empty", "", ""},
		{"only spaces", "   ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FinalValue(tt.in); got != tt.want {
				t.Errorf("FinalValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The sim writes "Answer: <value>" lines; whatever value it writes must come
// back out as that value's FinalValue, or agreeing sims would look split.
func TestFinalValueOfAnswerLineIsStable(t *testing.T) {
	for _, v := range []string{"391", "-3.5", "1,234", "Washington, D.C.", "Brasília", "3.14159", "299792458", "0.3333"} {
		first := FinalValue("Some working.\nAnswer: " + v)
		again := FinalValue("Other words, 12 of them.\nAnswer: " + first)
		if first != again {
			t.Errorf("value %q: %q then %q", v, first, again)
		}
	}
}

func TestCanonicalNumber(t *testing.T) {
	tests := map[string]string{
		"0": "0", "00": "0", "-0": "0", "+0.0": "0", "1,234.50": "1234.5", "391.0": "391",
		"+7": "7", "-12.300": "-12.3", ".5": "0.5", "-.5": "-0.5", "10": "10", "100.001": "100.001",
	}
	for in, want := range tests {
		if got := canonicalNumber(in); got != want {
			t.Errorf("canonicalNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzFinalValue(f *testing.F) {
	for _, s := range []string{"Answer: 42", "#### 1,234", "A: -0", "**Paris**.", "agent2.1", "3-4", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = FinalValue(s)
	})
}

// TestNumberLocsMatchesTheRegexp: the hand scan finds exactly what the
// regexp it replaced finds, on random text made of the characters that
// matter.
func TestNumberLocsMatchesTheRegexp(t *testing.T) {
	oracle := regexp.MustCompile(`(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+`)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789012345,,..  a-$\n"
	for i := range 200_000 {
		b := make([]byte, rng.IntN(24))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		var want [][2]int
		for _, loc := range oracle.FindAllStringIndex(s, -1) {
			want = append(want, [2]int{loc[0], loc[1]})
		}
		if got := numberLocs(s); !slices.Equal(got, want) {
			t.Fatalf("case %d %q: numberLocs %v, the regexp %v", i, s, got, want)
		}
	}
}
