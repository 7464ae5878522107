package finalvalue

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
		{"marker value with a unit is its number", "Answer: 1,200 apples.", "1200"},
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

		// Real-looking model endings (issue 11, item 8).
		{"a later A: reply does not override Answer:", "Let me check: 3 + 4 = 7.\nAnswer: 7\nA: because 3 + 4 = 7", "7"},
		{"a later A: prose does not override Answer:", "…Answer: 7\nA: because", "7"},
		{"bare A: counts without a strong marker", "Q: 2+2?\nA: 4", "4"},
		{"qualifier after the number", "Answer: 7 (approx.)", "7"},
		{"unit after the number", "Final answer: 42 cm", "42"},
		{"currency and per-unit prose", "**Answer:** $4.50 each", "4.5"},
		{"thousands and unit", "Answer: 1,234,567 km", "1234567"},
		{"fraction equals its decimal", "Answer: 1/2", "0.5"},
		{"decimal form of the same value", "Answer: 0.5", "0.5"},
		{"fraction in prose", "So the probability is 1/2.", "0.5"},
		{"non-terminating fraction in lowest terms", "Answer: 2/6", "1/3"},
		{"fraction that is whole", "Answer: 8/4", "2"},
		{"negative fraction", "Answer: -3/4", "-0.75"},
		{"latex boxed", "Thus the total is $\\boxed{72}$.", "72"},
		{"latex boxed fraction", "The probability is \\boxed{\\frac{1}{2}}", "0.5"},
		{"latex dfrac after marker", "Answer: $\\dfrac{3}{4}$", "0.75"},
		{"latex boxed with text unit", "\\[ \\boxed{42\\text{ cm}} \\]", "42"},
		{"latex boxed thousands", "\\boxed{1{,}000}", "1000"},
		{"latex boxed word", "The capital is \\boxed{\\text{Paris}}.", "paris"},
		{"Answer: beats an earlier box", "\\boxed{41} was wrong.\nAnswer: 42", "42"},
		{"equation after the marker", "Answer: 6 * 7 = 42", "42"},
		{"trailing prose after the marker", "Final answer: the total is 42 dollars.", "42"},
		{"short text after the marker stays text", "Answer: July 4, 1776", "july 4, 1776"},
		{"date stays text", "Answer: 1969-07-20", "1969-7-20"},
		{"percent after the marker", "Answer: 50%", "50"},
		{"escaped percent in TeX", "Answer: $50\\%$", "50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.in); got != tt.want {
				t.Errorf("Of(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The sim writes "Answer: <value>" lines; whatever value it writes must come
// back out as that value's FinalValue, or agreeing sims would look split.
func TestFinalValueOfAnswerLineIsStable(t *testing.T) {
	for _, v := range []string{"391", "-3.5", "1,234", "Washington, D.C.", "Brasília", "3.14159", "299792458", "0.3333"} {
		first := Of("Some working.\nAnswer: " + v)
		again := Of("Other words, 12 of them.\nAnswer: " + first)
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
		_ = Of(s)
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
