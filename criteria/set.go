package criteria

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ErrInvalid is wrapped by every error about criteria or a request for them
// that the caller can correct: a missing text, an unknown category, two
// musts, a count or kind out of range.
var ErrInvalid = errors.New("invalid evaluation criteria")

// Limits of a set (docs/DESIGN.md, "Evaluation criteria").
const (
	MinGenerated = 3  // fewest criteria a model is asked for
	MaxGenerated = 8  // most criteria a model is asked for
	DefaultCount = 5  // criteria asked for when the caller names no count
	MaxProvided  = 12 // most criteria a caller may write
)

// Where a set came from. A caller always learns which: defaults are never
// passed off as generated.
const (
	SourceGenerated = "generated" // a model wrote them for this task
	SourceProvided  = "provided"  // the caller wrote them
	SourceDefault   = "default"   // the built-in criteria for the kind of task
)

// Kinds of task, which choose the built-in defaults and steer generation.
const (
	KindCode     = "code"
	KindWriting  = "writing"
	KindAnalysis = "analysis"
	KindPlan     = "plan"
	KindOther    = "other"
)

// Kinds lists every kind, in the order messages name them.
func Kinds() []string { return []string{KindCode, KindWriting, KindAnalysis, KindPlan, KindOther} }

// Set is a list of criteria with where it came from.
type Set struct {
	Items []Item `json:"criteria"`
	// Aspiration is one line saying what an outstanding answer would be.
	Aspiration string `json:"aspiration,omitempty"`
	Source     string `json:"source"` // generated | provided | default
	Kind       string `json:"kind"`
	// Model is the model spec that generated the set, or was asked to.
	Model string `json:"model,omitempty"`
	// Note says anything the caller should know about how the set was made:
	// why these are defaults, which item was made the must.
	Note string `json:"note,omitempty"`
	// Usage is what generating the set cost (nil when no model was called).
	Usage *providers.Usage `json:"usage,omitempty"`
}

// Must returns the set's must item (the zero Item if it has none).
func (s Set) Must() Item {
	for _, it := range s.Items {
		if it.Category == Must {
			return it
		}
	}
	return Item{}
}

// CheckKind returns the kind a caller named, lower-cased; "" stays "" (the
// caller then guesses with GuessKind).
func CheckKind(kind string) (string, error) {
	k := strings.ToLower(strings.TrimSpace(kind))
	if k == "" {
		return "", nil
	}
	for _, known := range Kinds() {
		if k == known {
			return k, nil
		}
	}
	return "", fmt.Errorf("%w: kind %q is not one of %s", ErrInvalid, kind, strings.Join(Kinds(), ", "))
}

// CheckCount returns the number of criteria to generate: DefaultCount for 0,
// else a number from MinGenerated to MaxGenerated.
func CheckCount(count int) (int, error) {
	switch {
	case count == 0:
		return DefaultCount, nil
	case count < MinGenerated || count > MaxGenerated:
		return 0, fmt.Errorf("%w: count %d must be from %d to %d (default %d)", ErrInvalid, count, MinGenerated, MaxGenerated, DefaultCount)
	}
	return count, nil
}

// kindWords are the words GuessKind looks for, matched as whole words.
var kindWords = []struct {
	kind  string
	words *regexp.Regexp
}{
	{KindCode, regexp.MustCompile(`\b(code|coding|function|functions|bug|bugs|implement|implementation|refactor|compile|compiler|script|api|endpoint|unit tests?|regex|sql|python|golang|javascript|typescript|rust|java|library|pull request|stack trace|debug|program|algorithm|cli|repository|repo)\b`)},
	{KindPlan, regexp.MustCompile(`\b(plan|planning|roadmap|migration|migrate|schedule|rollout|roll out|strategy|itinerary|timeline|milestones?|launch|checklist|steps to|runbook)\b`)},
	{KindAnalysis, regexp.MustCompile(`\b(analy[sz]e|analysis|compare|comparison|evaluate|assess|assessment|why|explain|investigate|data|dataset|trend|trends|root cause|pros and cons|trade-?offs?|estimate|forecast|which)\b`)},
	{KindWriting, regexp.MustCompile(`\b(write|rewrite|essay|blog|post|article|email|letter|story|poem|copy|draft|edit|tweet|speech|headline|cover letter|newsletter|press release|announcement|bio)\b`)},
}

// codeDeliverable matches a task whose deliverable is code: a verb of making
// and, within a few words, a piece of a program.
var codeDeliverable = regexp.MustCompile(`\b(write|implement|create|build|code|fix|add|make|refactor|port|rewrite|generate)\b(\s+\S+){0,5}?\s+(function|functions|method|class|script|program|module|package|library|cli|endpoint|handler|regex|query|parser|decorator|unit tests?|test suite)\b`)

// GuessKind picks the kind of a task from its words when the caller names
// none: code when the task asks for code to be made; else the kind with the
// most matching words, ties going to the earlier of
// code, plan, analysis, writing ("write a function" is code); no match is
// other. A heuristic, so the kind is always reported and can be overridden.
func GuessKind(task string) string {
	t := strings.ToLower(task)
	if codeDeliverable.MatchString(t) {
		return KindCode // asks for code, whatever it is about ("a function that formats blog posts")
	}
	best, bestN := KindOther, 0
	for _, kw := range kindWords {
		if n := len(kw.words.FindAllStringIndex(t, -1)); n > bestN {
			best, bestN = kw.kind, n
		}
	}
	return best
}
