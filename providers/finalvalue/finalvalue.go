package finalvalue

import (
	"math/big"
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

// Of reduces an answer to the short value two answers are compared
// by (docs/DESIGN.md, "Final values"), in this order: the value after the last
// strong answer marker (`Answer:`, `Final answer:`, `####`), else the last
// LaTeX \boxed{…}, else the value after the last bare `A:`, else the last
// number, else the whole text. A marker's or box's value that starts with a
// number is that number ("7 (approx.)", "1,200 apples", "$4.50 each" → 7,
// 1200, 4.5); one with "=" is what follows the last "="; a sentence of more
// than three words is its last number. Text is lower-cased, whitespace
// collapsed, trailing punctuation and surrounding emphasis, dollar signs and
// quotes removed; numbers are written canonically (1,234.50 → 1234.5) and a
// fraction with a terminating decimal as that decimal (1/2, \frac{1}{2} →
// 0.5; 1/3 stays 1/3, in lowest terms).
func Of(text string) string {
	text = strings.ReplaceAll(text, "\u2212", "-") // typographic minus
	if v, ok := afterLastMarker(text, false); ok {
		return v
	}
	if v, ok := lastBoxed(text); ok {
		if v = markedValue(v); v != "" {
			return v
		}
	}
	if v, ok := afterLastMarker(text, true); ok {
		return v
	}
	if n, ok := lastNumber(text); ok {
		return n
	}
	return cleanValue(text)
}

// afterLastMarker returns the value after the last marker (strong ones, or
// with weak only `A:`): the rest of its line, or the next non-blank line when
// the marker ends its line ("Answer:\n42"). A marker with nothing after it is
// ignored.
func afterLastMarker(text string, weak bool) (string, bool) {
	var buf [8]int // most texts have a marker or two; no allocation for them
	ends := markerEnds(buf[:0], text, weak)
	for i := len(ends) - 1; i >= 0; i-- {
		for line := range strings.SplitSeq(text[ends[i]:], "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if v := markedValue(line); v != "" {
				return v, true
			}
			break
		}
	}
	return "", false
}

// markedValue reduces what follows a marker (or sits in a box) to its value.
func markedValue(v string) string {
	v = cleanValue(unLaTeX(v))
	if i := strings.LastIndexByte(v, '='); i >= 0 && strings.TrimSpace(v[i+1:]) != "" {
		v = cleanValue(v[i+1:])
	}
	if n, ok := leadingNumber(v); ok {
		return n
	}
	if len(strings.Fields(v)) > 3 {
		if n, ok := lastNumber(v); ok {
			return n
		}
	}
	return v
}

// leadingNumber is the number v starts with (after a currency sign), if what
// follows it is not more arithmetic: "7 (approx.)", "1200 apples", "50%".
func leadingNumber(v string) (string, bool) {
	v = strings.TrimLeft(v, "$€£ ")
	spans := numberSpans(v)
	if len(spans) == 0 || spans[0][0] != 0 {
		return "", false
	}
	end := spans[0][1]
	n := canonicalNumber(v[:end])
	if f, fend, ok := fractionAt(v, spans, 0); ok {
		n, end = f, fend
	}
	rest := strings.TrimSpace(v[end:])
	if rest != "" && strings.ContainsRune("+-*/×÷^=", rune(rest[0])) {
		return "", false
	}
	return n, true
}

// fractionAt reads spans[i] "/" spans[i+1] as one fraction, returning its
// canonical form and where it ends.
func fractionAt(s string, spans [][2]int, i int) (string, int, bool) {
	if i+1 >= len(spans) {
		return "", 0, false
	}
	a, b := spans[i], spans[i+1]
	if strings.TrimSpace(s[a[1]:b[0]]) != "/" {
		return "", 0, false
	}
	f, ok := canonicalFraction(s[a[0]:a[1]], s[b[0]:b[1]])
	return f, b[1], ok
}

// canonicalFraction writes num/den as a decimal when it terminates, else in
// lowest terms; exact (big.Rat), never rounded.
func canonicalFraction(num, den string) (string, bool) {
	var r big.Rat
	if _, ok := r.SetString(canonicalNumber(num) + "/1"); !ok {
		return "", false
	}
	var d big.Rat
	if _, ok := d.SetString(canonicalNumber(den)); !ok || d.Sign() == 0 {
		return "", false
	}
	r.Quo(&r, &d)
	q := new(big.Int).Set(r.Denom())
	for _, p := range []int64{2, 5} {
		bp := big.NewInt(p)
		m := new(big.Int)
		for {
			qq, rem := new(big.Int).QuoRem(q, bp, m)
			if rem.Sign() != 0 {
				break
			}
			q = qq
		}
	}
	if q.Cmp(big.NewInt(1)) != 0 {
		return r.String(), true // 1/3
	}
	// A terminating decimal has at most as many places as the denominator
	// has digits times four (2^k and 5^k need k places).
	return canonicalNumber(r.FloatString(4 * len(r.Denom().String()))), true
}

// lastBoxed is the content of the last \boxed{…} (braces balanced).
func lastBoxed(text string) (string, bool) {
	i := strings.LastIndex(text, "\\boxed{")
	if i < 0 {
		return "", false
	}
	inner, _, ok := braced(text[i+len("\\boxed"):])
	return inner, ok
}

// braced reads "{…}" at the start of s: its content and what follows.
func braced(s string) (inner, rest string, ok bool) {
	if !strings.HasPrefix(s, "{") {
		return "", s, false
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return s[1:i], s[i+1:], true
			}
		}
	}
	return "", s, false
}

// unLaTeX turns the TeX a model ends an answer with into plain text:
// \boxed{x}, \text{x} and friends → x, \frac{a}{b} → a/b, spacing and
// \left/\right dropped, \% → %, \$ → $.
func unLaTeX(s string) string {
	if !strings.ContainsAny(s, "\\{}") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '{' || s[i] == '}' {
			i++ // grouping only, as in 1{,}000
			continue
		}
		if s[i] != '\\' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		cmd := s[i+1 : j]
		switch cmd {
		case "frac", "dfrac", "tfrac":
			if num, rest, ok := braced(s[j:]); ok {
				if den, rest2, ok := braced(rest); ok {
					b.WriteString(unLaTeX(num) + "/" + unLaTeX(den))
					i = len(s) - len(rest2)
					continue
				}
			}
		case "boxed", "text", "textbf", "mathrm", "mathbf", "operatorname":
			if inner, rest, ok := braced(s[j:]); ok {
				b.WriteString(unLaTeX(inner))
				i = len(s) - len(rest)
				continue
			}
		case "left", "right", "displaystyle":
			i = j
			continue
		case "":
			if j < len(s) {
				switch s[j] {
				case '%', '$':
					b.WriteByte(s[j])
				case ',', '!', ';', ' ':
					b.WriteByte(' ')
				case '(', ')', '[', ']':
				default:
					b.WriteByte(s[j])
				}
				i = j + 1
				continue
			}
		case "cdot", "times":
			b.WriteString("*")
			i = j
			continue
		}
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}

// markerEnds finds every answer marker at the start of the text or after a
// non-word character (so "Final answer: 7" counts and "data:" does not), and returns
// where each ends, in order: the strong ones, `Answer:` and `####`, or with
// weak the bare `A:`, which models also write as a dialogue's reply ("A:
// because…") and so only counts where no strong marker is. Markdown emphasis
// around the word ("**Answer:**", "**Answer**:") is allowed because models
// write it that way constantly. A hand scan rather than a regexp: every vote
// and every sim step runs this, and a backtracking regexp was most of the
// sim's time. The ends are appended to ends.
func markerEnds(ends []int, text string, weak bool) []int {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '#':
			if !weak && strings.HasPrefix(text[i:], "####") && boundaryBefore(text, i) {
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
				if weak {
					continue
				}
				k = j - 6
			case weak && j >= 1 && (text[j-1] == 'a' || text[j-1] == 'A'):
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

// boundaryBefore tells whether a marker may start at i: at the start or
// after anything but a letter or digit ("…Answer:", "(Answer: 7)").
func boundaryBefore(text string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
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

// lastNumber is the text's last number, canonical; "1/2" at the end is the
// fraction, not its denominator.
func lastNumber(text string) (string, bool) {
	spans := numberSpans(text)
	if len(spans) == 0 {
		return "", false
	}
	if n := len(spans); n >= 2 {
		if f, _, ok := fractionAt(text, spans, n-2); ok {
			return f, true
		}
	}
	last := spans[len(spans)-1]
	return canonicalNumber(text[last[0]:last[1]]), true
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
