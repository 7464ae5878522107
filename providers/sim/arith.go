package sim

import (
	"errors"
	"math/big"
	"regexp"
	"strings"
)

// Limits that keep a hostile task ("9^9^9^9") from eating the machine: the
// sim answers arithmetic a person would ask, not arbitrary-precision puzzles.
const (
	maxExponent = 64
	maxBits     = 1024
	maxDepth    = 64
	maxDigits   = 40
)

var (
	errSyntax   = errors.New("not an arithmetic expression")
	errTooLarge = errors.New("too large to be a plausible question")
	errDivZero  = errors.New("division by zero")
)

// Words and symbols people use for operators, rewritten to the ASCII the
// parser reads. Order matters: "multiplied by" before "by" would ever count.
var operatorWords = strings.NewReplacer(
	"×", "*", "✕", "*", "·", "*", "∗", "*", "÷", "/", "−", "-", "–", "-", "**", "^",
	" multiplied by ", " * ", " times ", " * ", " divided by ", " / ", " over ", " / ",
	" plus ", " + ", " minus ", " - ", " to the power of ", " ^ ", " squared", "^2", " cubed", "^3",
)

var (
	letterTimes   = regexp.MustCompile(`(\d)\s*[xX]\s*(\d)`)
	thousandsSep  = regexp.MustCompile(`(\d),(\d{3})\b`)
	candidateRuns = regexp.MustCompile(`[0-9.+\-*/^() ]+`)
)

// findArithmetic finds the arithmetic question in a task ("What is 17 * 23?",
// "Compute (12+7)*3") and evaluates it exactly. It picks the run of
// expression characters with the most numbers that parses, needs at least one
// operator, and reports the expression as written for the answer's wording.
func findArithmetic(task string) (expr string, val *big.Rat, ok bool) {
	s := " " + strings.ToLower(task) + " "
	s = operatorWords.Replace(s)
	s = letterTimes.ReplaceAllString(s, "$1 * $2")
	for thousandsSep.MatchString(s) {
		s = thousandsSep.ReplaceAllString(s, "$1$2")
	}
	bestNums := 0
	for _, run := range candidateRuns.FindAllString(s, -1) {
		run = trimRun(run)
		p := &parser{toks: tokenize(run)}
		if p.toks == nil {
			continue
		}
		v, err := p.parse()
		// A lone number ("in 2024") is not a question; the most numbers win
		// so "In 2024, what is 3 + 4 * 5?" reads the expression.
		if err != nil || p.numbers < 2 || p.ops == 0 || p.numbers <= bestNums {
			continue
		}
		expr, val, ok, bestNums = strings.Join(strings.Fields(run), " "), v, true, p.numbers
	}
	return expr, val, ok
}

// trimRun drops what a sentence leaves around an expression: spaces, a final
// full stop, and parentheses that open or close outside it.
func trimRun(run string) string {
	for {
		before := run
		run = strings.TrimSpace(run)
		run = strings.TrimRight(run, ".")
		if strings.Count(run, ")") > strings.Count(run, "(") && strings.HasSuffix(run, ")") {
			run = run[:len(run)-1]
		}
		if strings.Count(run, "(") > strings.Count(run, ")") && strings.HasPrefix(run, "(") {
			run = run[1:]
		}
		if run == before {
			return run
		}
	}
}

type token struct {
	op  byte     // 0 for a number
	num *big.Rat // set when op == 0
}

type parser struct {
	toks    []token
	pos     int
	depth   int
	numbers int // how many numbers the expression has
	ops     int // how many binary operators
}

// tokenize splits an expression; nil means it holds something else (a
// version number "1.2.3", a lone dot).
func tokenize(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			// A number longer than any question asks about would only make
			// big.Rat's parse and normalisation slow.
			if j-i > maxDigits {
				return nil
			}
			r, ok := new(big.Rat).SetString(s[i:j])
			if !ok || strings.Count(s[i:j], ".") > 1 {
				return nil
			}
			toks = append(toks, token{num: r})
			i = j
		case strings.IndexByte("+-*/^()", c) >= 0:
			toks = append(toks, token{op: c})
			i++
		default:
			return nil
		}
	}
	return toks
}

func (p *parser) peek() byte {
	if p.pos >= len(p.toks) {
		return '$'
	}
	if p.toks[p.pos].num != nil {
		return 'n'
	}
	return p.toks[p.pos].op
}

func (p *parser) parse() (*big.Rat, error) {
	for _, t := range p.toks {
		if t.num != nil {
			p.numbers++
		}
	}
	v, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, errSyntax
	}
	return v, nil
}

// expr := term {(+|-) term}
func (p *parser) expr() (*big.Rat, error) {
	v, err := p.term()
	if err != nil {
		return nil, err
	}
	for op := p.peek(); op == '+' || op == '-'; op = p.peek() {
		p.pos++
		p.ops++
		w, err := p.term()
		if err != nil {
			return nil, err
		}
		if op == '+' {
			v = new(big.Rat).Add(v, w)
		} else {
			v = new(big.Rat).Sub(v, w)
		}
		if err := checkSize(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// term := unary {(*|/|implicit before "(") unary}
func (p *parser) term() (*big.Rat, error) {
	v, err := p.unary()
	if err != nil {
		return nil, err
	}
	for op := p.peek(); op == '*' || op == '/' || op == '('; op = p.peek() {
		if op != '(' {
			p.pos++
		}
		p.ops++
		w, err := p.unary()
		if err != nil {
			return nil, err
		}
		if op == '/' {
			if w.Sign() == 0 {
				return nil, errDivZero
			}
			v = new(big.Rat).Quo(v, w)
		} else {
			v = new(big.Rat).Mul(v, w)
		}
		if err := checkSize(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// unary := (-|+) unary | power. Unary minus binds looser than ^, so -2^2 is
// -4 as a mathematician reads it.
func (p *parser) unary() (*big.Rat, error) {
	switch p.peek() {
	case '-':
		p.pos++
		v, err := p.unary()
		if err != nil {
			return nil, err
		}
		return new(big.Rat).Neg(v), nil
	case '+':
		p.pos++
		return p.unary()
	}
	return p.power()
}

// power := primary [^ unary], right-associative through unary.
func (p *parser) power() (*big.Rat, error) {
	base, err := p.primary()
	if err != nil {
		return nil, err
	}
	if p.peek() != '^' {
		return base, nil
	}
	p.pos++
	p.ops++
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, errTooLarge
	}
	exp, err := p.unary()
	if err != nil {
		return nil, err
	}
	if !exp.IsInt() || !exp.Num().IsInt64() {
		return nil, errSyntax // fractional powers are out of the bank
	}
	n := exp.Num().Int64()
	if n > maxExponent || n < -maxExponent {
		return nil, errTooLarge
	}
	if base.Sign() == 0 && n < 0 {
		return nil, errDivZero
	}
	neg := n < 0
	if neg {
		n = -n
	}
	num := new(big.Int).Exp(base.Num(), big.NewInt(n), nil)
	den := new(big.Int).Exp(base.Denom(), big.NewInt(n), nil)
	if neg {
		num, den = den, num
	}
	v := new(big.Rat).SetFrac(num, den)
	return v, checkSize(v)
}

// primary := number | ( expr )
func (p *parser) primary() (*big.Rat, error) {
	switch p.peek() {
	case 'n':
		v := p.toks[p.pos].num
		p.pos++
		return v, nil
	case '(':
		p.pos++
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxDepth {
			return nil, errTooLarge
		}
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, errSyntax
		}
		p.pos++
		return v, nil
	}
	return nil, errSyntax
}

func checkSize(v *big.Rat) error {
	if v.Num().BitLen() > maxBits || v.Denom().BitLen() > maxBits {
		return errTooLarge
	}
	return nil
}

// formatRat writes a value the way an answer would: an integer as is, a
// terminating decimal exactly, anything else rounded to six places.
func formatRat(v *big.Rat) string {
	if v.IsInt() {
		return v.Num().String()
	}
	places := 6
	if k, ok := terminatingPlaces(v.Denom()); ok && k <= 12 {
		places = k
	}
	s := v.FloatString(places)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// terminatingPlaces tells whether 1/d has a finite decimal expansion and how
// many places it needs: d must be 2^a·5^b, and then it needs max(a, b).
func terminatingPlaces(d *big.Int) (int, bool) {
	d = new(big.Int).Set(d)
	two, five := big.NewInt(2), big.NewInt(5)
	a, b := 0, 0
	m := new(big.Int)
	for d.Cmp(big.NewInt(1)) > 0 {
		switch {
		case m.Mod(d, two).Sign() == 0:
			d.Quo(d, two)
			a++
		case m.Mod(d, five).Sign() == 0:
			d.Quo(d, five)
			b++
		default:
			return 0, false
		}
	}
	return max(a, b), true
}
