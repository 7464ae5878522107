package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Wordings of one worked line per kind of item: %[1]s is the subject (the
// expression or the fact's name), %[2]s the value. Several of them, so that a
// revision reads differently from the answer it revises and is not refused
// as a duplicate.
var wordings = map[itemKind][]string{
	kindArithmetic: {
		"%[1]s = %[2]s.",
		"Working it through: %[1]s comes to %[2]s.",
		"Step by step, %[1]s evaluates to %[2]s.",
		"Computing %[1]s gives %[2]s.",
		"I get %[2]s for %[1]s.",
		"Checking the arithmetic again, %[1]s = %[2]s.",
	},
	kindFact: {
		"%[1]s is %[2]s.",
		"As far as I recall, %[1]s is %[2]s.",
		"Checking what I know: %[1]s is %[2]s.",
		"I am fairly confident that %[1]s is %[2]s.",
		"From memory, %[1]s is %[2]s.",
		"The fact asked for is %[1]s, which is %[2]s.",
	},
	kindGiven: {
		"Working through the problem, I get %[2]s.",
		"After checking each step, the result is %[2]s.",
		"My calculation gives %[2]s.",
		"Reasoning it out carefully leads to %[2]s.",
		"The value I arrive at is %[2]s.",
		"Taking it step by step, I reach %[2]s.",
	},
}

// answerTexts lists every wording of an answer with the given value, starting
// at a seeded position, each ending in the "Answer:" line finalvalue.Of reads.
func answerTexts(it item, value string, r *rand.Rand) []string {
	ws := wordings[it.kind]
	start := r.IntN(len(ws))
	out := make([]string, len(ws))
	for i := range ws {
		line := capitalize(fmt.Sprintf(ws[(start+i)%len(ws)], it.subject, value))
		out[i] = line + "\nAnswer: " + value
	}
	return out
}

// draftText is a plainly synthetic answer for a task outside the bank. The
// step number and agent id keep drafts distinct, so none is ever refused as a
// duplicate of another.
func draftText(task, agent string, step int, revision bool) string {
	what := "a placeholder answer"
	if revision {
		what = "a revised placeholder answer"
	}
	return fmt.Sprintf("[simulated] draft %d by %s: %s to %q.\nNo model wrote this text; a simulated agent stands in for one.",
		step, agent, what, excerpt(task, 80))
}

var voteReasons = []string{
	"%[1]s's answer gives %[2]s, which agrees with my own working.",
	"%[1]s reaches %[2]s; I checked it and agree.",
	"I agree with %[1]s: the value is %[2]s.",
	"%[1]s has it right with %[2]s.",
}

var adoptReasons = []string{
	"On reflection %[1]s is right: the value is %[2]s, so I change my mind.",
	"%[1]s convinced me; %[2]s is correct and my earlier value was not.",
	"Rechecking against %[1]s, I now think %[2]s is right.",
}

var draftReasons = []string{
	"[simulated] %[1]s's draft reads best to me (score %.2[2]f).",
	"[simulated] I prefer %[1]s's draft (score %.2[2]f).",
}

func pick(r *rand.Rand, list []string) string { return list[r.IntN(len(list))] }

// normText is how duplicates are compared: whitespace collapsed, and case
// folded too, to stay clear of a stricter check than coordination's.
// normText lower-cases s and collapses its whitespace; ASCII text, which is
// nearly all a sim sees, in one pass without the intermediate slices.
func normText(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.ToLower(strings.Join(strings.Fields(s), " "))
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// firstFree returns the first text not among taken, or the first one made
// unique with a note that names the step and attempt, which no other text
// carries.
func firstFree(texts []string, taken *takenTexts, step, attempt int) string {
	for _, t := range texts {
		if !taken.has(t) {
			return t
		}
	}
	note := fmt.Sprintf(" (Rechecked at step %d, attempt %d.)", step, attempt+1)
	if line, value, ok := strings.Cut(texts[0], "\nAnswer: "); ok {
		return line + note + "\nAnswer: " + value
	}
	return texts[0] + note
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
