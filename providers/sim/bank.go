package sim

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// itemKind says where a known task's truth comes from; it picks the wording.
type itemKind int

const (
	kindArithmetic itemKind = iota // the sim computed it
	kindFact                       // the fixed facts
	kindGiven                      // an ItemModel supplied it
)

// item is a task whose right answer the sim knows.
type item struct {
	kind    itemKind
	subject string   // the expression or the fact's name, for wordings
	truth   string   // the right value as an answer writes it
	wrong   []string // a fact's listed wrong values
	exact   *big.Rat // arithmetic only
	misses  []string // wrongValues, computed once by lookupBank
	// display maps the finalvalue.Of form of the truth and every near miss to
	// how an answer writes it ("canberra" → "Canberra"); read-only once built.
	display map[string]string
	// truthNorm is norm(truth), computed once by prepare.
	truthNorm string
}

// prepare computes the near misses and display forms once per item.
func (it item) prepare() item {
	it.misses = it.wrongValues()
	it.truthNorm = norm(it.truth)
	it.display = map[string]string{it.truthNorm: it.truth}
	for _, w := range it.misses {
		it.display[norm(w)] = w
	}
	return it
}

// norm is the value under finalvalue.Of, which is how every
// comparison in the sim (and in coordination) sees it.
func norm(value string) string { return finalvalue.Of("Answer: " + value) }

// lookupBank finds the task in the answer bank: arithmetic first, since a
// computed expression is unambiguous, then the facts.
func lookupBank(task string) (item, bool) {
	if c, ok := bankCache.Load(task); ok {
		e := c.(cached)
		return e.it, e.ok
	}
	it, ok := lookupBankUncached(task)
	if ok {
		it = it.prepare()
	}
	// Every step of every agent asks about the same task, so the parse and
	// the near misses are computed once. The cap keeps a long-running server
	// from growing without bound; dropping the cache only costs a re-parse.
	if bankCacheSize.Add(1) > 4096 {
		bankCache.Clear()
		bankCacheSize.Store(0)
	}
	bankCache.Store(task, cached{it, ok})
	return it, ok
}

type cached struct {
	it item
	ok bool
}

var (
	bankCache     sync.Map // task → cached
	bankCacheSize atomic.Int64
)

func lookupBankUncached(task string) (item, bool) {
	if expr, v, ok := findArithmetic(task); ok {
		return item{kind: kindArithmetic, subject: expr, truth: formatRat(v), exact: v}, true
	}
	if f, ok := findFact(task); ok {
		return item{kind: kindFact, subject: f.subject, truth: f.value, wrong: f.wrong}, true
	}
	return item{}, false
}

// Truth is the answer bank's value for a task, in finalvalue.Of form
// ("391", "paris"), or false when the task is outside the bank. Benchmarks
// and tests use it to score a team's final answer.
func Truth(task string) (string, bool) {
	it, ok := lookupBank(task)
	if !ok {
		return "", false
	}
	return norm(it.truth), true
}

// attractorShare is how often a wrong first answer is the item's attractor
// rather than another near miss. Wrong answers of real models cluster
// (research: agreement-when-both-wrong ≈ 0.6–0.75), and a shared wrong value
// is what lets a team converge on a wrong majority.
const attractorShare = 0.6

// nearMiss draws a plausible wrong value for the item. The attractor depends
// on the task alone, so every agent that errs is drawn to the same one.
func (it item) nearMiss(r *rand.Rand) string {
	cands := it.misses
	if cands == nil {
		cands = it.wrongValues()
	}
	if len(cands) == 0 {
		return "not " + it.truth
	}
	if len(cands) == 1 || r.Float64() < attractorShare {
		return cands[0]
	}
	return cands[1+r.IntN(len(cands)-1)]
}

// wrongValues lists the near misses, attractor first, none equal to the truth
// under finalvalue.Of.
func (it item) wrongValues() []string {
	var cands []string
	switch {
	case len(it.wrong) > 0:
		cands = it.wrong
	case it.exact != nil:
		cands = numericMisses(it.exact, it.subject)
	default:
		if v, ok := new(big.Rat).SetString(strings.ReplaceAll(norm(it.truth), ",", "")); ok {
			cands = numericMisses(v, it.subject+"|"+it.truth)
		}
	}
	truth := norm(it.truth)
	var out []string
	seen := map[string]bool{truth: true}
	for _, c := range cands {
		if n := norm(c); !seen[n] {
			seen[n] = true
			out = append(out, c)
		}
	}
	return out
}

// numericMisses are the slips people make: off by one or two, a carried ten,
// two digits swapped, one digit wrong. The order is a fixed shuffle keyed by
// the task so that the attractor differs from task to task.
func numericMisses(v *big.Rat, key string) []string {
	var out []string
	add := func(w *big.Rat) {
		// A count that is never negative should not go negative by a slip.
		if v.Sign() >= 0 && w.Sign() < 0 {
			return
		}
		out = append(out, formatRat(w))
	}
	step := big.NewRat(1, 1)
	if !v.IsInt() {
		step = big.NewRat(1, 10)
	}
	for _, k := range []int64{1, -1, 2, -2, 10, -10} {
		add(new(big.Rat).Add(v, new(big.Rat).Mul(step, big.NewRat(k, 1))))
	}
	digits := []byte(formatRat(v))
	// Swap the last two different adjacent digits (391 → 319) ...
	for i := len(digits) - 2; i >= 0; i-- {
		a, b := digits[i], digits[i+1]
		if a != b && isDigit(a) && isDigit(b) && !(b == '0' && (i == 0 || !isDigit(digits[i-1]))) {
			swapped := slices.Clone(digits)
			swapped[i], swapped[i+1] = b, a
			if w, ok := new(big.Rat).SetString(string(swapped)); ok {
				add(w)
			}
			break
		}
	}
	// ... and bump the leading digit (391 → 491), the slip the ±k steps miss.
	for i, c := range digits {
		if isDigit(c) {
			if c != '9' {
				slipped := slices.Clone(digits)
				slipped[i]++
				if w, ok := new(big.Rat).SetString(string(slipped)); ok {
					add(w)
				}
			}
			break
		}
	}
	r := rand.New(rand.NewPCG(hashString("attractor", key), 0x5eed))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
