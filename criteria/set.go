package criteria

import (
	"errors"
	"fmt"
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
	KindCode = "code"
	// KindBuild is a thing to open or run and use: a site, an app, a game,
	// a bot. Its code matters less than whether it works for its user.
	KindBuild    = "build"
	KindWriting  = "writing"
	KindAnalysis = "analysis"
	KindPlan     = "plan"
	KindOther    = "other"
)

// Kinds lists every kind, in the order messages name them.
func Kinds() []string {
	return []string{KindCode, KindBuild, KindWriting, KindAnalysis, KindPlan, KindOther}
}

// Set is a list of criteria with where it came from.
type Set struct {
	Items []Item `json:"criteria"`
	// Aspiration is one line saying what an outstanding answer would be.
	Aspiration string `json:"aspiration,omitempty"`
	Source     string `json:"source"` // generated | provided | default
	Kind       string `json:"kind"`
	// KindReason says how Kind was chosen: named by the caller, or which
	// words of the task it was guessed from, so a wrong guess is seen and
	// overridden.
	KindReason string `json:"kind_reason,omitempty"`
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
// caller then guesses with Classify, or uses ResolveKind).
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
