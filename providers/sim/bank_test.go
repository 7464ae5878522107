package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

func TestArithmeticIsComputed(t *testing.T) {
	tests := []struct{ task, want string }{
		{"What is 17 * 23?", "391"},
		{"Compute (12+7)*3", "57"},
		{"Compute (12+7)*3.", "57"},
		{"What is 17 × 23?", "391"},
		{"What is 144 ÷ 12?", "12"},
		{"Calculate 2^10.", "1024"},
		{"What is 2**8?", "256"},
		{"What is 3.5 + 2.25?", "5.75"},
		{"What is 0.1 + 0.2?", "0.3"},
		{"What is 10 / 4?", "2.5"},
		{"What is 1/3?", "0.333333"},
		{"What is 2/3?", "0.666667"},
		{"What is -2^2?", "-4"},
		{"What is 2^-2?", "0.25"},
		{"What is 2^3^2?", "512"},
		{"What is 100 - 58 - 7?", "35"},
		{"What is 12 - 20?", "-8"},
		{"What is 7 times 8?", "56"},
		{"What is 81 divided by 9?", "9"},
		{"What is 5 squared?", "25"},
		{"What is 6 x 7?", "42"},
		{"What is 1,234 + 1?", "1235"},
		{"Evaluate 2(3+4).", "14"},
		{"What is ((2+3)*(4-1))^2?", "225"},
		{"In 2024, what is 3 + 4?", "7"},
		{"What is 3 − 5?", "-2"},
	}
	for _, tt := range tests {
		t.Run(tt.task, func(t *testing.T) {
			got, ok := Truth(tt.task)
			if !ok || got != tt.want {
				t.Errorf("Truth(%q) = %q, %v; want %q", tt.task, got, ok, tt.want)
			}
		})
	}
}

func TestNotArithmetic(t *testing.T) {
	for _, task := range []string{
		"What is 42?",
		"What is 1/0?",
		"Install version 1.2.3 please",
		"What is 9^9^9^9?",
		"What is 2^0.5?",
		"Write a haiku about autumn.",
		"",
	} {
		if _, _, ok := findArithmetic(task); ok {
			t.Errorf("findArithmetic(%q) found an expression", task)
		}
	}
}

func TestFactsAreMatchedLeniently(t *testing.T) {
	tests := []struct{ task, want string }{
		{"What is the capital of France?", "paris"},
		{"what's the CAPITAL city of australia", "canberra"},
		{"Name the capital of South Africa (executive).", "pretoria"},
		{"Which city is the capital of the United States?", "washington, d.c"},
		{"Capital of Türkiye?", "ankara"},
		{"In what year did humans first land on the Moon?", "1969"},
		{"When did Apollo 11 land?", "1969"},
		{"When did World War II end?", "1945"},
		{"When did World War I begin?", "1914"},
		{"What year did the Berlin Wall fall?", "1989"},
		{"What is the speed of light in m/s?", "299792458"},
		{"What is pi to 5 decimal places?", "3.14159"},
		{"Give Euler's number to five places.", "2.71828"},
		{"What is absolute zero in Celsius?", "-273.15"},
		{"How many planets are in the Solar System?", "8"},
		{"How many days are in a leap year?", "366"},
	}
	for _, tt := range tests {
		t.Run(tt.task, func(t *testing.T) {
			got, ok := Truth(tt.task)
			if !ok || got != tt.want {
				t.Errorf("Truth(%q) = %q, %v; want %q", tt.task, got, ok, tt.want)
			}
		})
	}
	for _, task := range []string{"Write a poem about a pizza.", "Summarise this article.", "Plan a spirited team offsite."} {
		if v, ok := Truth(task); ok {
			t.Errorf("Truth(%q) = %q, want outside the bank", task, v)
		}
	}
}

func TestNearMissesAreWrongAndPlausible(t *testing.T) {
	tasks := []string{"What is 17 * 23?", "What is 3.5 + 2.25?", "What is 1/3?", "What is 12 - 20?", "What is 2 + 2?",
		"What is 1 - 1?", "What is the capital of Brazil?", "When did the Titanic sink?", "What is pi?"}
	for _, task := range tasks {
		it, ok := lookupBank(task)
		if !ok {
			t.Fatalf("%q not in the bank", task)
		}
		truth := norm(it.truth)
		misses := it.wrongValues()
		if len(misses) < 2 {
			t.Errorf("%q: only %d near misses", task, len(misses))
		}
		for _, w := range misses {
			if norm(w) == truth || w == "" {
				t.Errorf("%q: near miss %q equals the truth %q", task, w, truth)
			}
		}
		r := rand.New(rand.NewPCG(1, 2))
		attractor := 0
		for range 500 {
			w := it.nearMiss(r)
			if norm(w) == truth {
				t.Fatalf("%q: drew the truth as a near miss", task)
			}
			if w == misses[0] {
				attractor++
			}
		}
		if attractor < 250 {
			t.Errorf("%q: the attractor was drawn %d/500 times, want about %v", task, attractor, attractorShare)
		}
	}
	// A count stays non-negative when it slips.
	it, _ := lookupBank("What is 1 - 1?")
	for _, w := range it.wrongValues() {
		if w[0] == '-' {
			t.Errorf("near miss of 0 went negative: %q", w)
		}
	}
}

func TestEveryWordingEndsInItsValue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, task := range []string{"What is 17 * 23?", "What is the capital of the United States?", "What is absolute zero in Celsius?"} {
		it, _ := lookupBank(task)
		for _, value := range append(it.wrongValues(), it.truth) {
			for _, text := range answerTexts(it, value, r) {
				if got := finalvalue.Of(text); got != norm(value) {
					t.Errorf("FinalValue(%q) = %q, want %q", text, got, norm(value))
				}
			}
		}
	}
}

func FuzzFindArithmetic(f *testing.F) {
	for _, s := range []string{"What is 17 * 23?", "((((1))))", "2^64^64", "1/0", "3.4.5 + 1", "-(-(-1))", "9(9(9(9)))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, task string) {
		if len(task) > 2000 {
			return
		}
		if _, v, ok := findArithmetic(task); ok {
			_ = formatRat(v)
		}
	})
}
