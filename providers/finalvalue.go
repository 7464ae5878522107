package providers

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// numberLocs finds, left to right, what the regexp
//
//	(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+
//
// finds: an unsigned number, with thousands groups or plain digits, each with
// an optional fraction, or a bare fraction. A hand scan (the regexp is kept
// as the oracle of a test) because every vote and every sim step normalises
// answers, and the regexp was most of that time. The sign and the boundaries
// are numberSpans's job.
func numberLocs(s string) [][2]int {
	var locs [][2]int
	digits := func(i int) int { // end of the digit run starting at i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return i
	}
	for i := 0; i < len(s); {
		switch {
		case isDigit(s[i]):
			end := digits(i)
			// Thousands groups need a run of 1-3 digits followed by ",ddd"
			// at least once; each group is exactly three digits, and a
			// fourth digit simply ends the match there.
			if end-i <= 3 && groupAt(s, end) {
				for groupAt(s, end) {
					end += 4
				}
			}
			if end+1 < len(s) && s[end] == '.' && isDigit(s[end+1]) {
				end = digits(end + 1)
			}
			locs = append(locs, [2]int{i, end})
			i = end
		case s[i] == '.' && i+1 < len(s) && isDigit(s[i+1]):
			end := digits(i + 1)
			locs = append(locs, [2]int{i, end})
			i = end
		default:
			i++
		}
	}
	return locs
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// groupAt tells whether ",ddd" starts at i.
func groupAt(s string, i int) bool {
	return i+3 < len(s) && s[i] == ',' && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3])
}

// FinalValue reduces an answer to the short value two answers are compared
// by (DESIGN.md §2, "Short answers"): the text after the last answer marker,
// else the last number, else the whole text; lower-cased, whitespace
// collapsed, trailing punctuation and surrounding emphasis, dollar signs and
// quotes removed, and numbers written canonically (1,234.50 → 1234.5).
func FinalValue(text string) string {
	text = strings.ReplaceAll(text, "\u2212", "-") // typographic minus
	if v, ok := afterLastMarker(text); ok {
		return v
	}
	if n, ok := lastNumber(text); ok {
		return canonicalNumber(n)
	}
	return cleanValue(text)
}

// afterLastMarker returns the cleaned value after the last marker: the rest of
// its line, or the next non-blank line when the marker ends its line
// ("Answer:\n42"). A marker with nothing after it is ignored.
func afterLastMarker(text string) (string, bool) {
	var buf [8]int // most texts have a marker or two; no allocation for them
	ends := markerEnds(buf[:0], text)
	for i := len(ends) - 1; i >= 0; i-- {
		for line := range strings.SplitSeq(text[ends[i]:], "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if v := cleanValue(line); v != "" {
				return v, true
			}
			break
		}
	}
	return "", false
}

// markerEnds finds every answer marker, `Answer:`, `A:` or `####`, at the
// start of the text or after whitespace (so "Final answer: 7" counts and
// "data:" does not), and returns where each ends, in order. Markdown emphasis
// around the word ("**Answer:**", "**Answer**:") is allowed because models
// write it that way constantly. A hand scan rather than a regexp: every vote
// and every sim step runs this, and a backtracking regexp was most of the
// sim's time. The ends are appended to ends.
func markerEnds(ends []int, text string) []int {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '#':
			if strings.HasPrefix(text[i:], "####") && boundaryBefore(text, i) {
				ends = append(ends, i+4)
				i += 3
			}
		case ':':
			j := i
			for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
				j--
			}
			for j > 0 && (text[j-1] == '*' || text[j-1] == '_') {
				j--
			}
			var k int
			switch {
			case j >= 6 && strings.EqualFold(text[j-6:j], "answer"):
				k = j - 6
			case j >= 1 && (text[j-1] == 'a' || text[j-1] == 'A'):
				k = j - 1
			default:
				continue
			}
			for k > 0 && (text[k-1] == '*' || text[k-1] == '_') {
				k--
			}
			if boundaryBefore(text, k) {
				ends = append(ends, i+1)
			}
		}
	}
	return ends
}

func boundaryBefore(text string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return unicode.IsSpace(r)
}

// numberSpans finds the numbers of s that stand on their own: not the tail of
// a word ("agent2", "v1.0") and not followed by more digits.
func numberSpans(s string) [][2]int {
	var spans [][2]int
	for _, loc := range numberLocs(s) {
		start, end := loc[0], loc[1]
		if start > 0 {
			prev, _ := utf8.DecodeLastRuneInString(s[:start])
			if unicode.IsLetter(prev) || unicode.IsDigit(prev) || prev == '.' || prev == '_' {
				continue
			}
		}
		if end < len(s) {
			next, _ := utf8.DecodeRuneInString(s[end:])
			if unicode.IsDigit(next) {
				continue
			}
			// "1.2.3" or "1,2345": the number goes on past what we matched.
			if (next == '.' || next == ',') && end+1 < len(s) && s[end+1] >= '0' && s[end+1] <= '9' {
				continue
			}
		}
		// A sign belongs to the number only when it is not an operator
		// between two terms ("3-4" is not minus four).
		if start > 0 && (s[start-1] == '-' || s[start-1] == '+') {
			if start == 1 {
				start--
			} else {
				before, _ := utf8.DecodeLastRuneInString(s[:start-1])
				if !unicode.IsLetter(before) && !unicode.IsDigit(before) && before != ')' {
					start--
				}
			}
		}
		spans = append(spans, [2]int{start, end})
	}
	return spans
}

func lastNumber(text string) (string, bool) {
	spans := numberSpans(text)
	if len(spans) == 0 {
		return "", false
	}
	last := spans[len(spans)-1]
	return text[last[0]:last[1]], true
}

// trimSet is what may surround a value without being part of it: emphasis,
// dollar signs (currency or TeX math), code ticks and quotes.
const trimSet = "*$`\"'\u201c\u201d\u2018\u2019_"

// cleanValue is the normalisation every extracted value goes through.
func cleanValue(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	for {
		before := s
		s = strings.TrimSpace(s)
		s = strings.TrimRight(s, ".,;:!")
		s = strings.Trim(s, trimSet)
		if s == before {
			break
		}
	}
	// A lone multiple-choice letter in parentheses means the letter: "(b)".
	if len(s) == 3 && s[0] == '(' && s[2] == ')' {
		s = s[1:2]
	}
	return canonicalNumbers(s)
}

// canonicalNumbers rewrites every free-standing number inside s.
func canonicalNumbers(s string) string {
	spans := numberSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp[0]])
		b.WriteString(canonicalNumber(s[sp[0]:sp[1]]))
		prev = sp[1]
	}
	b.WriteString(s[prev:])
	return b.String()
}

// canonicalNumber writes a number without sign noise, thousands separators,
// leading zeros or trailing fractional zeros, working on the digits rather
// than a float so no value is ever rounded.
func canonicalNumber(n string) string {
	neg := false
	switch {
	case strings.HasPrefix(n, "-"):
		neg, n = true, n[1:]
	case strings.HasPrefix(n, "+"):
		n = n[1:]
	}
	n = strings.ReplaceAll(n, ",", "")
	intPart, frac, _ := strings.Cut(n, ".")
	intPart = strings.TrimLeft(intPart, "0")
	frac = strings.TrimRight(frac, "0")
	if intPart == "" {
		intPart = "0"
	}
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out
}
