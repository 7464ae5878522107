package providers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ModelLister is an adapter that can ask its API which models it serves
// (OpenAI and compatible GET /v1/models, Anthropic's models list, Gemini's
// models.list), so a team can be checked before any money is spent.
type ModelLister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// ErrModelNotFound is wrapped by the error for a model its provider does not
// list.
var ErrModelNotFound = errors.New("model not found")

// ModelNotFoundError names a model its provider's listing lacks, and the
// listed names closest to it.
type ModelNotFoundError struct {
	Backend string
	Model   string
	Listed  int      // how many models the provider listed
	Closest []string // at most three, closest first
}

func (e *ModelNotFoundError) Error() string {
	msg := fmt.Sprintf("%s has no model %q (its models list has %d)", e.Backend, e.Model, e.Listed)
	if len(e.Closest) > 0 {
		var alts []string
		for _, c := range e.Closest {
			alts = append(alts, e.Backend+"/"+c)
		}
		msg += "; did you mean " + strings.Join(alts, ", ") + "?"
	}
	return msg
}

func (e *ModelNotFoundError) Unwrap() error { return ErrModelNotFound }

// dated matches the suffix providers add to a model's alias in their
// listings: claude-haiku-4-5-20251001, gpt-4.1-2025-04-14, …-latest,
// gemini-2.5-flash-001.
var (
	dated     = regexp.MustCompile(`^-(\d{8}|\d{4}-\d{2}-\d{2}|\d{3}|latest)$`)
	datedTail = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)
)

// Listed tells whether a model is in a provider's listing: by its exact
// name, or as the alias of a dated or versioned name the listing holds.
func Listed(model string, names []string) bool {
	for _, n := range names {
		if n == model || (strings.HasPrefix(n, model) && dated.MatchString(n[len(model):])) {
			return true
		}
	}
	return false
}

// Closest returns up to n listed names nearest to a model name by edit
// distance (a shared prefix breaks ties), leaving out names too far to be a
// typo of it.
func Closest(model string, names []string, n int) []string {
	type cand struct {
		name   string
		dist   int
		prefix int
	}
	var cs []cand
	seen := map[string]bool{}
	var forms []string
	for _, name := range names {
		forms = append(forms, name)
		// A dated name is offered as its alias, what people type.
		if loc := datedTail.FindStringIndex(name); loc != nil && loc[0] > 0 {
			forms = append(forms, name[:loc[0]])
		}
	}
	for _, name := range forms {
		if seen[name] {
			continue
		}
		seen[name] = true
		d := EditDistance(strings.ToLower(model), strings.ToLower(name))
		if d > max(3, len(model)/2) {
			continue
		}
		cs = append(cs, cand{name, d, commonPrefix(model, name)})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		if a.prefix != b.prefix {
			return b.prefix - a.prefix
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// EditDistance is the Levenshtein distance of two strings, in bytes (model
// names and config keys are ASCII). It names the closest model a provider
// lists, and the closest key a team file knows.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
