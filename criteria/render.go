package criteria

import (
	"fmt"
	"strings"
)

// Text renders a set for a reader: where it came from, the kind of task and
// why, each criterion with how to verify it and what to avoid, the
// aspiration, and the note.
func (s Set) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Evaluation criteria (%s, %s task", s.Source, s.Kind)
	if s.Model != "" && s.Source == SourceGenerated {
		fmt.Fprintf(&b, ", by %s", s.Model)
	}
	b.WriteString(")\n")
	if s.KindReason != "" {
		fmt.Fprintf(&b, "Kind: %s, %s.\n", s.Kind, s.KindReason)
	}
	b.WriteString("\n")
	for _, it := range s.Items {
		fmt.Fprintf(&b, "- %s [%s] %s\n", it.ID, it.Category, it.Text)
		if it.VerifyBy != "" {
			fmt.Fprintf(&b, "  verify by: %s\n", it.VerifyBy)
		}
		if len(it.AntiPatterns) > 0 {
			fmt.Fprintf(&b, "  avoid: %s\n", strings.Join(it.AntiPatterns, "; "))
		}
	}
	if s.Aspiration != "" {
		fmt.Fprintf(&b, "\nAspiration: %s\n", s.Aspiration)
	}
	if s.Note != "" {
		fmt.Fprintf(&b, "\nNote: %s\n", s.Note)
	}
	return b.String()
}
