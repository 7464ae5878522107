package criteria

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Sizes past which a criterion stops being a criterion and starts crowding
// every agent's prompt.
const (
	maxTextRunes       = 1000
	maxAntiPatterns    = 8
	maxAntiRunes       = 300
	maxAspirationRunes = 300
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,40}$`)

// Validate checks a list of criteria: from lo to hi items, each with an id
// (1–40 letters, digits, '_', '-' or '.') used once, a non-empty text, a
// known category, no NUL, and exactly one must. Every problem is named in one
// error wrapping ErrInvalid, so a caller (or a model given a corrective
// retry) can fix them all at once.
func Validate(items []Item, lo, hi int) error {
	var problems []string
	switch {
	case lo == hi && len(items) != lo:
		problems = append(problems, fmt.Sprintf("%s given; give exactly %d", count(len(items)), lo))
	case len(items) < lo || len(items) > hi:
		problems = append(problems, fmt.Sprintf("%s given; give from %d to %d", count(len(items)), lo, hi))
	}
	seen := map[string]bool{}
	var musts []string
	for i, it := range items {
		name := it.ID
		if name == "" {
			name = fmt.Sprintf("criterion %d", i+1)
		}
		switch {
		case it.ID == "":
			problems = append(problems, fmt.Sprintf("criterion %d has no id", i+1))
		case !idPattern.MatchString(it.ID):
			problems = append(problems, fmt.Sprintf("id %q must be 1 to 40 letters, digits, '_', '-' or '.' (e.g. E%d)", it.ID, i+1))
		case seen[it.ID]:
			problems = append(problems, fmt.Sprintf("id %s is used twice", it.ID))
		}
		seen[it.ID] = true
		if strings.TrimSpace(it.Text) == "" {
			problems = append(problems, fmt.Sprintf("%s has no text", name))
		} else if n := utf8.RuneCountInString(it.Text); n > maxTextRunes {
			problems = append(problems, fmt.Sprintf("%s's text is %d characters; keep it under %d", name, n, maxTextRunes))
		}
		if n := utf8.RuneCountInString(it.VerifyBy); n > maxTextRunes {
			problems = append(problems, fmt.Sprintf("%s's verify_by is %d characters; keep it under %d", name, n, maxTextRunes))
		}
		// A session's setup holds its criteria as JSON, where a NUL is
		// \u0000: PostgreSQL's store cannot decode that escape, and a new
		// session's texts with one are refused the same way.
		if strings.ContainsRune(it.Text, 0) || strings.ContainsRune(it.VerifyBy, 0) ||
			slices.ContainsFunc(it.AntiPatterns, func(a string) bool { return strings.ContainsRune(a, 0) }) {
			problems = append(problems, fmt.Sprintf("%s holds a NUL character (U+0000); remove it", name))
		}
		if len(it.AntiPatterns) > maxAntiPatterns {
			problems = append(problems, fmt.Sprintf("%s has %d anti_patterns; keep at most %d", name, len(it.AntiPatterns), maxAntiPatterns))
		}
		for _, a := range it.AntiPatterns {
			if n := utf8.RuneCountInString(a); n > maxAntiRunes {
				problems = append(problems, fmt.Sprintf("an anti-pattern of %s is %d characters; keep each under %d", name, n, maxAntiRunes))
				break
			}
		}
		switch it.Category {
		case Must:
			musts = append(musts, name)
		case Should, Could:
		default:
			problems = append(problems, fmt.Sprintf("%s's category %q is not must, should or could (MassGen's primary, standard and stretch also work)", name, it.Category))
		}
	}
	switch {
	case len(musts) == 0 && len(items) > 0:
		problems = append(problems, "no criterion is must; mark exactly one must: the primary focus, where an excellent answer differs most from an adequate one")
	case len(musts) > 1:
		problems = append(problems, fmt.Sprintf("%s are all must; keep exactly one must (the primary focus) and make the others should", strings.Join(musts, ", ")))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
}

// checkAspiration refuses an aspiration too long to be the one line it is
// meant to be.
func checkAspiration(a string) error {
	if n := utf8.RuneCountInString(a); n > maxAspirationRunes {
		return fmt.Errorf("%w: the aspiration is %d characters; keep it to one line under %d", ErrInvalid, n, maxAspirationRunes)
	}
	return nil
}

func count(n int) string {
	if n == 1 {
		return "1 criterion"
	}
	return fmt.Sprintf("%d criteria", n)
}

// Provided reads, numbers and validates criteria a caller wrote, in any
// shape Parse accepts: 1 to MaxProvided items. If none is must, the first
// should item (else the first item) becomes the must and the set's note says
// so: a caller's list is usually in order of importance, and refusing a
// list for lacking a label it may never have heard of helps no one. Two or
// more musts are refused, since which one is the primary focus is the
// caller's call. The set's Kind is left for the caller to fill in.
func Provided(raw []byte) (Set, error) {
	items, aspiration, err := Parse(raw)
	if err != nil {
		return Set{}, err
	}
	if len(items) == 0 {
		return Set{}, fmt.Errorf("%w: no criteria given; write 1 to %d, e.g. [{\"text\": \"…\", \"category\": \"must\"}]", ErrInvalid, MaxProvided)
	}
	s := Set{Items: items, Aspiration: aspiration, Source: SourceProvided}
	if !hasMust(items) {
		at := 0
		for i, it := range items {
			if it.Category == Should {
				at = i
				break
			}
		}
		items[at].Category = Must
		s.Note = fmt.Sprintf("no criterion was marked must, so %s is the primary focus; mark another one must to change that", items[at].ID)
	}
	if err := Validate(items, 1, MaxProvided); err != nil {
		return Set{}, err
	}
	if err := checkAspiration(aspiration); err != nil {
		return Set{}, err
	}
	return s, nil
}
